"""The SQL half of a structured fact search, the same on both backends (``sql.py`` says how).

A ranked search reads every rowid under its prefix (10,000 rows: 8-11 ms of PostgreSQL's
``array_agg`` on a busy machine), then ranks them in the scope's in-memory copy. For one scope
(every field of it named), that list is kept in the copy's memo: the copy takes in every row of
the scope written since (the tenant's change counter) before it is read, and taking one in clears
the memo, so a kept list is the one the SQL would give again, as long as the clock has not passed
the first validUntil among its rows (nor gone back before it was read). Conditions on the facts'
JSON are read from the copy's field columns (field_columns.py) when the search names one scope,
by SQL otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from engramdb.storage.fact_search import sql
from engramdb.storage.fact_search.port import FieldCondition, ScopeMatch, Sources
from engramdb.storage.scope_copy import ScopeCopy

T = TypeVar("T")


class CopyRead(Protocol):
    """(scope key, model, read): read the scope's in-memory copy (of ``model``'s vectors), brought up to date."""

    def __call__(self, scope_key: str, model: str, read: Callable[[ScopeCopy], T], /) -> T: ...


@dataclass(frozen=True)
class _Listed:
    """A scope's rowids under a prefix as the SQL found them ``at`` a time: the same from then until
    ``until`` (the first of their validUntil; None: none of them ends), while no row changes."""

    at: str
    until: str | None
    rowids: np.ndarray

    def holds_at(self, now: str) -> bool:
        return self.at <= now and (self.until is None or now < self.until)


class FactSearchSQL:
    """``current_facts``, ``count_current_facts`` and ``fact_subjects`` of a tenant store (a base of
    both backends' tenant stores, which say how they run a statement and in which dialect)."""

    _fact_search_fetch: Callable[[str, Sequence[Any]], list[Any]]  # set by the tenant store: how it reads
    _fact_search_dialect: sql.Dialect
    _fact_search_copy: CopyRead  # set by the tenant store: how it reads a scope's in-memory copy

    def current_facts(
        self, scopes: ScopeMatch, *, subject_prefix: str, now: str, sources: Sources, page: tuple[int, int]
    ) -> list[int]:
        statement, params = sql.current_facts(self._fact_search_dialect, scopes, subject_prefix, now, sources, page)
        return [int(r[0]) for r in self._fact_search_fetch(statement, params)]

    def grouped_facts(
        self, scopes: ScopeMatch, *, subject_prefix: str, now: str, sources: Sources, model: str | None = None
    ) -> dict[str, np.ndarray]:
        scope_key = scopes.scope_key
        if model is None or scope_key is None:
            return {key: rowids for key, rowids, _ in self._grouped(scopes, subject_prefix, now, sources)}

        def listed(copy: ScopeCopy) -> np.ndarray:
            kept = copy.memo.get(("grouped_facts", subject_prefix, sources))
            if isinstance(kept, _Listed) and kept.holds_at(now):
                return kept.rowids
            found = self._grouped(scopes, subject_prefix, now, sources)
            rowids, until = (found[0][1], found[0][2]) if found else (np.zeros(0, dtype=np.int64), None)
            rowids.flags.writeable = False  # shared by every search that finds it kept
            copy.memo.put(("grouped_facts", subject_prefix, sources), _Listed(now, until, rowids), rowids.nbytes)
            return rowids

        rowids = self._fact_search_copy(scope_key, model, listed)
        return {scope_key: rowids} if len(rowids) else {}

    def _grouped(
        self, scopes: ScopeMatch, subject_prefix: str, now: str, sources: Sources
    ) -> list[tuple[str, np.ndarray, str | None]]:
        statement, params = sql.grouped(self._fact_search_dialect, scopes, subject_prefix, now, sources)
        found = self._fact_search_fetch(statement, params)
        return [(str(key), _rowids(ids), None if until is None else str(until)) for key, ids, until in found]

    def count_current_facts(self, scopes: ScopeMatch, *, subject_prefix: str, now: str, sources: Sources) -> int:
        statement, params = sql.count(self._fact_search_dialect, scopes, subject_prefix, now, sources)
        return int(self._fact_search_fetch(statement, params)[0][0])

    def facts_meeting(
        self, rowids: Sequence[int] | np.ndarray, where: Sequence[FieldCondition], copy: tuple[str, str] | None = None
    ) -> set[int]:
        if not len(rowids):
            return set()
        if copy is None:
            return self._meeting([int(rowid) for rowid in rowids], where)
        ids = np.asarray(rowids, dtype=np.int64)

        def read(held: ScopeCopy) -> tuple[np.ndarray, np.ndarray]:
            positions = held.positions_of(ids)
            inside = positions >= 0
            met, by_sql = held.fields.meeting(ids[inside], positions[inside], where, len(held), self._texts)
            return ids[inside][met], np.concatenate([ids[~inside], ids[inside][by_sql]])

        found, rest = self._fact_search_copy(copy[0], copy[1], read)
        # A row the copy does not hold (erased since it was listed, say), or whose text SQL reads its
        # own way, is read the SQL way.
        return set(found.tolist()) | (self._meeting(rest.tolist(), where) if len(rest) else set())

    def facts_newest_first(self, rowids: Sequence[int], page: tuple[int, int]) -> list[int]:
        if not len(rowids):
            return []
        statement, params = sql.newest_first(self._fact_search_dialect, rowids, page)
        return [int(r[0]) for r in self._fact_search_fetch(statement, params)]

    def _meeting(self, rowids: Sequence[int], where: Sequence[FieldCondition]) -> set[int]:
        statement, params = sql.meeting(self._fact_search_dialect, rowids, where)
        return {int(r[0]) for r in self._fact_search_fetch(statement, params)}

    def _texts(self, rowids: Sequence[int]) -> list[tuple[int, str]]:
        statement, params = sql.texts(self._fact_search_dialect, rowids)
        return [(int(rowid), str(text)) for rowid, text in self._fact_search_fetch(statement, params)]

    def fact_subjects(
        self, scopes: ScopeMatch, *, subject_prefix: str, after: str | None, now: str, limit: int
    ) -> list[str]:
        statement, params = sql.subjects(self._fact_search_dialect, scopes, subject_prefix, after, now, limit)
        return [str(r[0]) for r in self._fact_search_fetch(statement, params)]


def _rowids(found: str | list[int]) -> np.ndarray:
    """Rowids as the backend aggregates them (SQLite: comma-separated text, PostgreSQL: a list)."""
    if isinstance(found, str):
        return np.fromstring(found, dtype=np.int64, sep=",")
    return np.asarray(found, dtype=np.int64)
