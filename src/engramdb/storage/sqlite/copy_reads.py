"""How a SQLite tenant reads its scopes' in-memory copies: each read brings the copy up to date with
every committed write first (storage/scope_cache.py), asking the tenant's counters once per
reading block; and the full-precision vectors a big scope's copy re-ranks its short list with."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Self, TypeVar

import numpy as np

from engramdb.storage.scope_cache import ScopeCache, erasure_key, read_copy
from engramdb.storage.scope_cache import Source as CopySource
from engramdb.storage.scope_copy import ScopeCopy
from engramdb.storage.sqlite.connection import Connections
from engramdb.storage.sqlite.sql import COPY_ROW_SQL, copy_rows, placeholders

T = TypeVar("T")


class SQLiteCopyReads:
    """The scope-copy reads of a tenant's file (a mixin of SQLiteTenantStore)."""

    path: Path
    _db: Connections
    _copies: ScopeCache
    _vector_model: str | None
    # A reading block's counters (change_seq, erasures), asked once: see reading().
    _block: ContextVar[dict[str, Any] | None]

    @contextmanager
    def reading(self) -> Iterator[Self]:
        # Reads already share the thread's connection. A recall reads its scope's copy four or
        # five times: the block asks the tenant's counters once, and its reads see one state.
        if self._block.get() is not None:
            yield self
            return
        token = self._block.set({})
        try:
            yield self
        finally:
            self._block.reset(token)

    def _read_copy(self, scope_key: str, read: Callable[[ScopeCopy], T]) -> T:
        """Read the scope's in-memory copy, brought up to date with every committed write."""
        source = CopySource(
            current_seq=lambda: self._counters(scope_key)[0],
            changed_ids=lambda seq: [
                r[0]
                for r in self._db.fetchall(
                    "SELECT rowid FROM memories WHERE scope_key = ? AND change_seq > ?", (scope_key, seq)
                )
            ],
            rows=lambda ids: copy_rows(
                self._db.fetchall(
                    f"{COPY_ROW_SQL} WHERE rowid IN ({placeholders(ids)}) ORDER BY rowid",
                    [self._vector_model, self._vector_model, *ids],
                )
            ),
            generation=lambda: (self._counters(scope_key)[1], self._vector_model),
        )
        return read_copy(self._copies, f"{self.path}:{scope_key}", source, read)

    def _counters(self, scope_key: str) -> tuple[int, Any]:
        """The tenant's change counter and the scope's erasure count: this reading block's (one state
        for its reads), else read now."""
        erased = erasure_key(scope_key)
        block = self._block.get()
        known: dict[str, Any] = block if block is not None else {}
        missing = [k for k in ("change_seq", erased) if k not in known]
        if missing:
            found = dict(
                self._db.fetchall(f"SELECT key, value FROM meta WHERE key IN ({placeholders(missing)})", missing)
            )
            known.update({k: found.get(k) for k in missing})
        return int(known["change_seq"]), known[erased]

    def _vectors(self, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Read rows' vectors at full precision (the scope copy re-ranks its short list with them)."""
        rows = []
        for start in range(0, len(rowids), 10_000):  # under SQLite's limit of bound parameters
            part = rowids[start : start + 10_000].tolist()
            rows += self._db.fetchall(
                f"SELECT rowid, embedding FROM memories WHERE rowid IN ({placeholders(part)}) "
                "AND embed_state = 'ready'",
                part,
            )
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        width = max(len(r[1]) for r in rows)
        rows = [r for r in rows if len(r[1]) == width]
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)
        return np.array([r[0] for r in rows], dtype=np.int64), matrix.astype(np.float32)
