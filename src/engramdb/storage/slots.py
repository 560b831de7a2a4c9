"""The reads of a fact slot's versions that a write needs, narrowed in SQL to the few it concerns.

The age guard asks which retired versions start after the new fact, and valid time which versions
hold at its start and where the next one begins. Each read every version of the slot into Python
and filtered there, so a slot corrected every turn made each write slower as it grew (54 ms a
write at 1,000 versions against 6 ms at 200, bench/RESULTS.md session 43). Stored times are
fixed-width UTC text (``clock.to_text``): they compare as text, bytewise, as Python compares them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engramdb.storage.columns import MEMORY_COLUMNS
from engramdb.storage.port import MemoryRecord

_SLOT = "scope_key = ? AND subject_key = ? AND kind = ? AND source = 'MEMORY_FACT'"
_ENDS_AFTER = "(valid_until IS NULL OR valid_until{c} > {at}) AND (invalid_at IS NULL OR invalid_at{c} > {at})"


class SlotReadsSQL:
    """``Transaction``'s slot reads over ``_slot_fetch`` (each backend's transaction supplies it,
    with how it names the tenant, orders text bytewise and locks what it reads)."""

    _slot_collate = ""  # PostgreSQL's text follows its collation unless told: ' COLLATE "C"'
    _slot_lock = ""  # PostgreSQL locks the versions a write may change: " FOR UPDATE"

    def _slot_fetch(self, sql: str, params: Sequence[Any]) -> Sequence[Sequence[Any]]:
        """Rows of ``sql`` (``?`` marks)."""
        raise NotImplementedError

    def _slot_owner(self) -> tuple[str, list[Any]]:
        """The condition that keeps a read to the tenant's rows (none in a file of its own)."""
        return "", []

    def retired_after(
        self, scope_key: str, subject_key: str, kind: str, *, valid_from: str | None, recorded_at: str, but: str
    ) -> list[MemoryRecord]:
        c, (owner, owned) = self._slot_collate, self._slot_owner()
        rows = self._slot_fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {owner}{_SLOT} AND status IN ('superseded', 'expired') "
            f"AND memory_id <> ? AND (COALESCE(valid_from, ''){c} > ? "
            f"OR (COALESCE(valid_from, '') = ? AND recorded_at{c} > ?)) ORDER BY rowid{self._slot_lock}",
            [*owned, scope_key, subject_key, kind, but, valid_from or "", valid_from or "", recorded_at],
        )
        return [MemoryRecord(*r) for r in rows]

    def covering(self, scope_key: str, subject_key: str, kind: str, *, start: str, but: int) -> list[MemoryRecord]:
        c, (owner, owned) = self._slot_collate, self._slot_owner()
        rows = self._slot_fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {owner}{_SLOT} AND status IN ('superseded', 'expired') "
            f"AND rowid <> ? AND valid_from{c} <= ? AND {_ENDS_AFTER.format(c=c, at='?')} "
            f"ORDER BY rowid{self._slot_lock}",
            [*owned, scope_key, subject_key, kind, but, start, start, start],
        )
        return [MemoryRecord(*r) for r in rows]

    def next_start(self, scope_key: str, subject_key: str, kind: str, *, after: str, but: int) -> str | None:
        c, (owner, owned) = self._slot_collate, self._slot_owner()
        rows = self._slot_fetch(
            f"SELECT min(valid_from{c}) FROM memories WHERE {owner}{_SLOT} "
            f"AND status IN ('active', 'superseded', 'expired') AND rowid <> ? AND valid_from{c} > ? "
            f"AND {_ENDS_AFTER.format(c=c, at='valid_from')}",
            [*owned, scope_key, subject_key, kind, but, after],
        )
        return rows[0][0] if rows else None
