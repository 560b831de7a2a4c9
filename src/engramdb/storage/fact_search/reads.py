"""The SQL half of a structured fact search, the same on both backends (``sql.py`` says how)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engramdb.storage.fact_search import sql
from engramdb.storage.fact_search.port import ANY_SOURCE, FieldCondition, ScopeMatch, Sources


class FactSearchSQL:
    """``current_facts``, ``count_current_facts`` and ``fact_subjects`` of a tenant store (a base of
    both backends' tenant stores, which say how they run a statement and in which dialect)."""

    _fact_search_fetch: Callable[[str, Sequence[Any]], list[Any]]  # set by the tenant store: how it reads
    _fact_search_dialect: sql.Dialect

    def current_facts(
        self,
        scopes: ScopeMatch,
        *,
        subject_prefix: str,
        where: Sequence[FieldCondition],
        now: str,
        sources: Sources = ANY_SOURCE,
        page: tuple[int, int] | None = None,
    ) -> list[tuple[int, str]]:
        statement, params = sql.current_facts(
            self._fact_search_dialect, scopes, subject_prefix, where, now, sources, page
        )
        return self._fact_search_fetch(statement, params)  # (rowid, scope_key) rows as the driver gives them: thousands

    def count_current_facts(
        self,
        scopes: ScopeMatch,
        *,
        subject_prefix: str,
        where: Sequence[FieldCondition],
        now: str,
        sources: Sources = ANY_SOURCE,
    ) -> int:
        statement, params = sql.count(self._fact_search_dialect, scopes, subject_prefix, where, now, sources)
        return int(self._fact_search_fetch(statement, params)[0][0])

    def fact_subjects(
        self, scopes: ScopeMatch, *, subject_prefix: str, after: str | None, now: str, limit: int
    ) -> list[str]:
        statement, params = sql.subjects(self._fact_search_dialect, scopes, subject_prefix, after, now, limit)
        return [str(r[0]) for r in self._fact_search_fetch(statement, params)]
