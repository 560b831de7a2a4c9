"""The SQL half of a structured fact search, the same on both backends (``sql.py`` says how)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from engramdb.storage.fact_search import sql
from engramdb.storage.fact_search.port import FieldCondition, ScopeMatch, Sources


class FactSearchSQL:
    """``current_facts``, ``count_current_facts`` and ``fact_subjects`` of a tenant store (a base of
    both backends' tenant stores, which say how they run a statement and in which dialect)."""

    _fact_search_fetch: Callable[[str, Sequence[Any]], list[Any]]  # set by the tenant store: how it reads
    _fact_search_dialect: sql.Dialect

    def current_facts(
        self, scopes: ScopeMatch, *, subject_prefix: str, now: str, sources: Sources, page: tuple[int, int]
    ) -> list[int]:
        statement, params = sql.current_facts(self._fact_search_dialect, scopes, subject_prefix, now, sources, page)
        return [int(r[0]) for r in self._fact_search_fetch(statement, params)]

    def grouped_facts(
        self, scopes: ScopeMatch, *, subject_prefix: str, now: str, sources: Sources
    ) -> dict[str, np.ndarray]:
        statement, params = sql.grouped(self._fact_search_dialect, scopes, subject_prefix, now, sources)
        return {str(key): _rowids(ids) for key, ids in self._fact_search_fetch(statement, params)}

    def count_current_facts(self, scopes: ScopeMatch, *, subject_prefix: str, now: str, sources: Sources) -> int:
        statement, params = sql.count(self._fact_search_dialect, scopes, subject_prefix, now, sources)
        return int(self._fact_search_fetch(statement, params)[0][0])

    def facts_meeting(self, rowids: Sequence[int], where: Sequence[FieldCondition]) -> set[int]:
        if not len(rowids):
            return set()
        statement, params = sql.meeting(self._fact_search_dialect, rowids, where)
        return {int(r[0]) for r in self._fact_search_fetch(statement, params)}

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
