"""The SQL half of a structured fact search, the same on both backends (``sql.py`` says how)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engramdb.storage.fact_search import sql
from engramdb.storage.fact_search.port import FieldCondition, ScopeMatch

Fetch = Callable[[str, Sequence[Any]], list[Any]]


class FactSearchSQL:
    """``current_facts`` and ``fact_subjects`` of a tenant store, over its statement runner."""

    def __init__(self, fetch: Fetch, dialect: sql.Dialect) -> None:
        self._fetch = fetch
        self._dialect = dialect

    def current_facts(
        self, scopes: ScopeMatch, *, subject_prefix: str, where: Sequence[FieldCondition], now: str
    ) -> list[tuple[int, str]]:
        statement, params = sql.current_facts(self._dialect, scopes, subject_prefix, where, now)
        return [(int(r[0]), str(r[1])) for r in self._fetch(statement, params)]

    def fact_subjects(
        self, scopes: ScopeMatch, *, subject_prefix: str, after: str | None, now: str, limit: int
    ) -> list[str]:
        statement, params = sql.subjects(self._dialect, scopes, subject_prefix, after, now, limit)
        return [str(r[0]) for r in self._fetch(statement, params)]
