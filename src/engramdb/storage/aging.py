"""What memory that ages needs from storage, one implementation for both backends: the rows a
sweep weighs, the rows retention ends, batched use counts, and a person's marks (pin, importance).

The decisions themselves are core's (core/aging/decay.py); this module only reads and writes. Its
work (a sweep, re-embedding) runs in ``maintenance()``: on PostgreSQL, under the maintenance
statement timeout instead of a request's (storage/postgres/timeouts.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from engramdb.storage.erasure import ErasureWrites
from engramdb.storage.knowledge.rows import Run, chunks
from engramdb.storage.knowledge.sql import Dialect

WriteMany = Callable[[str, Sequence[Sequence[Any]]], None]  # one statement over many rows, committed
_AGING_COLUMNS = (
    "rowid, source, memory_id, scope_key, kind, recorded_at, observed_at, importance, "
    "coalesce(pinned, 0), coalesce(use_count, 0), last_used_at"
)


@dataclass(frozen=True)
class AgingRow:
    """A memory as aging weighs it."""

    rowid: int
    source: str
    memory_id: str
    scope_key: str
    kind: str | None
    recorded_at: str
    observed_at: str
    importance: float | None
    pinned: bool
    use_count: int
    last_used_at: str | None


def _aging_row(row: Sequence[Any]) -> AgingRow:
    return AgingRow(
        int(row[0]),
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        None if row[7] is None else float(row[7]),
        bool(row[8]),
        int(row[9]),
        row[10],
    )


class AgingStore:
    """A tenant's aging reads and batched writes (each write commits on its own)."""

    def __init__(
        self,
        run: Run,
        dialect: Dialect,
        write_many: WriteMany,
        maintenance: Callable[[], AbstractContextManager[None]] = nullcontext,
    ) -> None:
        self._run = run
        self._d = dialect
        self._write_many = write_many
        self.maintenance = maintenance  # a block of long work (SQLite sets no statement timeout)

    def active_rows(self, recorded_before: str, *, after_rowid: int, limit: int) -> list[AgingRow]:
        """Active episodes and facts recorded before a time, in rowid order (a page after ``after_rowid``)."""
        m = self._d.mark
        owned, params = self._d.owned("memories")
        rows = self._run(
            f"SELECT {_AGING_COLUMNS} FROM memories WHERE {owned}status = 'active' AND recorded_at < {m} "
            f"AND rowid > {m} ORDER BY rowid LIMIT {m}",
            [*params, recorded_before, after_rowid, limit],
        )
        return [_aging_row(r) for r in rows]

    def expired_rows(self, source: str, before: str, *, limit: int) -> list[AgingRow]:
        """Rows past a retention limit: episodes observed before ``before``; facts recorded before
        it (every status; never a pinned one)."""
        m = self._d.mark
        owned, params = self._d.owned("memories")
        column, pins = ("observed_at", "") if source == "EPISODE" else ("recorded_at", " AND coalesce(pinned, 0) = 0")
        rows = self._run(
            f"SELECT {_AGING_COLUMNS} FROM memories WHERE {owned}source = {m} AND {column} < {m}{pins} "
            f"ORDER BY rowid LIMIT {m}",
            [*params, source, before, limit],
        )
        return [_aging_row(r) for r in rows]

    def stale_vectors(self, model: str, *, after_rowid: int, limit: int) -> list[tuple[int, str]]:
        """Rows whose vector is another model's: ``(rowid, text to embed)``, in rowid order."""
        m = self._d.mark
        owned, params = self._d.owned("memories")
        rows = self._run(
            f"SELECT rowid, embed_text FROM memories WHERE {owned}embed_state = 'ready' "
            f"AND (embed_model IS NULL OR embed_model <> {m}) AND rowid > {m} ORDER BY rowid LIMIT {m}",
            [*params, model, after_rowid, limit],
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def stale_count(self, model: str) -> int:
        """How many rows have a vector of another model (the re-embedding backlog)."""
        return self._stale("memories", model)

    def newest_vector_models(self, models: Sequence[str]) -> set[str]:
        """Which of ``models`` made the newest of this tenant's vectors that any of them made: of its
        memories, and of its record texts (empty: none). Each walks its rowid index back from the end
        and stops at the first such vector, so it reads only the rows written after it."""
        m = self._d.mark
        found: set[str] = set()
        for table in ("memories", "record_vectors"):
            owned, params = self._d.owned(table)
            rows = self._run(
                f"SELECT embed_model FROM {table} WHERE {owned}embed_state = 'ready' "
                f"AND embed_model IN ({self._d.marks(len(models))}) ORDER BY rowid DESC LIMIT {m}",
                [*params, *models, 1],
            )
            found.update(str(row[0]) for row in rows)
        return found

    def stale_record_vectors(self, model: str, *, after_rowid: int, limit: int) -> list[tuple[int, str]]:
        """Record texts whose vector is another model's: ``(vector id, text)``, in id order."""
        m = self._d.mark
        owned, params = self._d.owned("record_vectors")
        rows = self._run(
            f"SELECT rowid, text FROM record_vectors WHERE {owned}embed_state = 'ready' "
            f"AND (embed_model IS NULL OR embed_model <> {m}) AND rowid > {m} ORDER BY rowid LIMIT {m}",
            [*params, model, after_rowid, limit],
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def stale_record_count(self, model: str) -> int:
        """How many record texts have a vector of another model (part of the re-embedding backlog)."""
        return self._stale("record_vectors", model)

    def _stale(self, table: str, model: str) -> int:
        """Ready vectors of ``table`` made by no model or another one: three ranges of its vectors-by-model
        index (``<>``, or an ``OR`` of them, read every entry: 2 s of /healthz, which needs no key, with
        1,000,000 memories)."""
        owned, params = self._d.owned(table)
        m, ready = self._d.mark, f"FROM {table} WHERE {owned}embed_state = 'ready' AND embed_model"
        ranges = [f"(SELECT count(*) {ready} {where})" for where in ("IS NULL", f"< {m}", f"> {m}")]
        sql = f"SELECT {' + '.join(ranges)}"
        return int(self._run(sql, [*params, *params, model, *params, model])[0][0])

    def record_use(self, uses: Sequence[tuple[int, int, str]]) -> None:
        """Add recalls to rows: ``(rowid, times, last at)`` each, in one statement per chunk."""
        m = self._d.mark
        owned, params = self._d.owned("memories")
        for chunk in chunks(list(uses), 500):
            self._write_many(
                f"UPDATE memories SET use_count = coalesce(use_count, 0) + {m}, "
                f"last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < {m} THEN {m} ELSE last_used_at END "
                f"WHERE {owned}rowid = {m}",
                [(times, at, at, *params, rowid) for rowid, times, at in chunk],
            )


class AgingWrites(ErasureWrites):
    """A person's marks on a memory, inside a store transaction (erasure and knowledge writes too)."""

    def set_marks(self, rowid: int, *, pinned: bool | None, importance: float | None) -> None:
        """Pin or unpin a row and set its importance (None leaves a mark as it is)."""
        m = self._d.mark
        owned, params = self._d.owned("memories")
        self._run(
            f"UPDATE memories SET pinned = coalesce({m}, pinned), importance = coalesce({m}, importance) "
            f"WHERE {owned}rowid = {m}",
            [None if pinned is None else int(pinned), importance, *params, rowid],
        )

    def touch(self, rowid: int, at: str) -> None:
        """Count a row as used at ``at`` (a restored memory starts strong again)."""
        m = self._d.mark
        owned, params = self._d.owned("memories")
        self._run(f"UPDATE memories SET last_used_at = {m} WHERE {owned}rowid = {m}", [at, *params, rowid])

    def marks(self, rowid: int) -> tuple[bool, float | None]:
        """Return a row's pin and importance, as this transaction sees them."""
        m = self._d.mark
        owned, params = self._d.owned("memories")
        row = self._run(
            f"SELECT coalesce(pinned, 0), importance FROM memories WHERE {owned}rowid = {m}", [*params, rowid]
        )[0]
        return bool(row[0]), None if row[1] is None else float(row[1])
