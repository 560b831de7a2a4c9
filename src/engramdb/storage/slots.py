"""The reads of a fact slot's versions that a write needs, narrowed in SQL to the few it concerns.

The age guard asks which retired versions start after the new fact, and valid time which versions
hold at its start and where the next one begins. Each read every version of the slot into Python
and filtered there, so a slot corrected every turn made each write slower as it grew (54 ms a
write at 1,000 versions against 6 ms at 200, bench/RESULTS.md session 43). SQL still read every
retired version through the slot's index: about 60 ms a write, inside the write lock, at 10,000.
Two indexes of a slot's versions by status, one on their starts (``memories_slot_starts``) and one on
their ends (``memories_slot_ends``: a successor's start, then their own validUntil), take each read to the
versions it concerns. PostgreSQL's reads lock what they return: a tenant's writes are one at a time
already (each takes its change counter's row first), so these locks add no order of their own. Stored times are
fixed-width UTC text (``clock.to_text``): they compare as text, bytewise, as Python compares them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engramdb.storage.columns import MEMORY_COLUMNS, memory_record
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
        if valid_from:  # a range of the starts' index (a version with no start is not later)
            later = f"valid_from{c} >= ? AND (valid_from{c} > ? OR recorded_at{c} > ?)"
        else:  # no start: every version with one is later (no write makes such a fact since validFrom is required)
            later = f"(COALESCE(valid_from, ''){c} > ? OR (COALESCE(valid_from, '') = ? AND recorded_at{c} > ?))"
        rows = self._slot_fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {owner}{_SLOT} AND status IN ('superseded', 'expired') "
            f"AND memory_id <> ? AND {later} ORDER BY rowid{self._slot_lock}",
            [*owned, scope_key, subject_key, kind, but, valid_from or "", valid_from or "", recorded_at],
        )
        return [memory_record(r) for r in rows]

    def covering(self, scope_key: str, subject_key: str, kind: str, *, start: str, but: int) -> list[MemoryRecord]:
        c, (owner, owned) = self._slot_collate, self._slot_owner()
        # Found by their ends, in the ends' index (a successor's start, then their own validUntil): those
        # a successor ends after ``start``, and those with no successor's end that end after it or never
        # (an expired version ends at its validUntil). An OR of them read every version. The start is
        # written ``(valid_from || '')``, which no index serves: the planners keep to the ends' index.
        # Each in row order, as every slot read locks (PostgreSQL), and only the rows that cover.
        began = f"AND rowid <> ? AND (valid_from || ''){c} <= ? "
        retired = f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {owner}{_SLOT} AND status IN ('superseded', 'expired') "
        slot = [*owned, scope_key, subject_key, kind]
        rows = [
            *self._slot_fetch(
                f"{retired}AND invalid_at{c} > ? AND (valid_until IS NULL OR valid_until{c} > ?) {began}"
                f"ORDER BY rowid{self._slot_lock}",
                [*slot, start, start, but, start],
            ),
            *self._slot_fetch(
                f"{retired}AND invalid_at IS NULL AND valid_until IS NULL {began}ORDER BY rowid{self._slot_lock}",
                [*slot, but, start],
            ),
            *self._slot_fetch(
                f"{retired}AND invalid_at IS NULL AND valid_until{c} > ? {began}ORDER BY rowid{self._slot_lock}",
                [*slot, start, but, start],
            ),
        ]
        return sorted((memory_record(r) for r in rows), key=lambda f: f.rowid)

    def next_start(self, scope_key: str, subject_key: str, kind: str, *, after: str, but: int) -> str | None:
        c, (owner, owned) = self._slot_collate, self._slot_owner()
        rows = self._slot_fetch(
            f"SELECT min(valid_from{c}) FROM memories WHERE {owner}{_SLOT} "
            f"AND status IN ('active', 'superseded', 'expired') AND rowid <> ? AND valid_from{c} > ? "
            f"AND {_ENDS_AFTER.format(c=c, at='valid_from')}",
            [*owned, scope_key, subject_key, kind, but, after],
        )
        return rows[0][0] if rows else None
