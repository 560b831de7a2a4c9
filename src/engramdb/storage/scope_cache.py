"""The scope copies a process holds: up to a memory limit, least recently used dropped first,
one vocabulary for all; and bringing a copy up to date before it is read."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from engramdb.core.lexical import Vocabulary
from engramdb.storage.scope_copy import CopyRow, ScopeCopy
from engramdb.storage.vector_index import AnnSettings


class ScopeCache:
    """Scope copies up to a memory limit (least recently used dropped first), one vocabulary for
    all of them, and the order they were last used in (what a restart warms first)."""

    def __init__(self, max_bytes: int = 1024 * 2**20, ann: AnnSettings | None = None) -> None:
        self.max_bytes = max_bytes
        self.ann = ann or AnnSettings()
        self.vocabulary = Vocabulary()
        self.loads = 0  # copies built from nothing (a miss: the scope was never held, or dropped)
        self.on_load: Callable[[], None] = lambda: None  # told after each miss (outside the lock)
        self._scopes: OrderedDict[str, ScopeCopy] = OrderedDict()
        self._sizes: dict[str, int] = {}  # bytes of each copy as last settled
        self._total = 0
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def lock_for(self, scope_key: str) -> threading.Lock:
        """Return the lock that serialises refreshes of one scope."""
        with self._guard:
            return self._locks.setdefault(scope_key, threading.Lock())

    def scope(self, scope_key: str) -> ScopeCopy:
        """Return the scope's copy (empty with seq 0 when not cached yet), now the most recent."""
        with self._guard:
            copy = self._scopes.get(scope_key)
            missed = copy is None
            if copy is None:
                copy = self._scopes[scope_key] = self.fresh()
                self.loads += 1
            self._scopes.move_to_end(scope_key)
        if missed:
            self.on_load()
        return copy

    def fresh(self) -> ScopeCopy:
        """Return an empty copy that shares this cache's vocabulary and settings."""
        return ScopeCopy(self.vocabulary, self.ann)

    def replace(self, scope_key: str, copy: ScopeCopy) -> None:
        """Put a rebuilt copy in place of the scope's one."""
        with self._guard:
            self._scopes[scope_key] = copy

    def settle(self, keep: str) -> None:
        """Count ``keep``'s copy as it is now, then drop least recently used copies (never
        ``keep``) until the held bytes fit the limit."""
        with self._guard:
            copy = self._scopes.get(keep)
            if copy is not None:
                self._total += copy.nbytes - self._sizes.get(keep, 0)
                self._sizes[keep] = copy.nbytes
            for key in list(self._scopes):
                if self._total <= self.max_bytes:
                    break
                if key != keep:
                    del self._scopes[key]
                    self._total -= self._sizes.pop(key, 0)

    @property
    def nbytes(self) -> int:
        with self._guard:
            return self._total

    def held(self) -> list[tuple[str, int]]:
        """Return (key, rows) of every copy held, most recently used first."""
        with self._guard:
            return [(key, len(copy)) for key, copy in reversed(self._scopes.items())]

    def holds(self, scope_key: str) -> bool:
        with self._guard:
            return scope_key in self._scopes

    def clear(self) -> None:
        """Drop every copy (they reload on the next query)."""
        with self._guard:
            self._scopes.clear()
            self._sizes.clear()
            self._total = 0


T = TypeVar("T")


_PAGE = 20_000  # rows read and applied at once: a million-row scope never sits in memory as rows


@dataclass(frozen=True)
class Source:
    """How a copy reads its scope: the tenant's change counter, the ids of the scope's rows
    stamped after a sequence number, and rows by id (in id order)."""

    current_seq: Callable[[], int]
    changed_ids: Callable[[int], Sequence[int]]
    rows: Callable[[Sequence[int]], list[CopyRow]]
    # What a copy's rows depend on beyond the counter: the tenant's erasures (a deletion leaves no
    # changed row to refresh) and the model whose vectors it holds. A copy of another is rebuilt.
    generation: Callable[[], object] = lambda: None


def read_copy(cache: ScopeCache, key: str, source: Source, read: Callable[[ScopeCopy], T]) -> T:
    """Bring the copy ``key`` names up to date with every committed write, then read it.

    Under the scope's lock: a refresh grows arrays that a reader would otherwise hold views of.
    The cache is brought back under its limit afterwards.
    """
    copy = cache.scope(key)
    with cache.lock_for(key):
        generation = source.generation()
        if copy.seq and copy.generation != generation:  # rows were erased, or another model's vectors
            copy = cache.fresh()
            cache.replace(key, copy)
        copy.generation = generation
        if not _refreshed(copy, source):  # rows arrived out of id order: start over
            copy = cache.fresh()
            copy.generation = generation
            _refreshed(copy, source)
            cache.replace(key, copy)
        answer = read(copy)
    cache.settle(keep=key)
    return answer


def _refreshed(copy: ScopeCopy, source: Source) -> bool:
    current = source.current_seq()
    if current <= copy.seq:
        return True
    ids = np.sort(np.asarray(source.changed_ids(copy.seq), dtype=np.int64))
    for start in range(0, len(ids), _PAGE):
        if not copy.apply(source.rows(ids[start : start + _PAGE].tolist())):
            return False
    copy.seq = current
    return True
