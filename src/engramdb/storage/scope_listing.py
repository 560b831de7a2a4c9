"""The scopes of a tenant that hold memories, most recently written first, with their counts.

Each write keeps when its scope was last written (``scope_activity``: a trigger on ``memories`` in
SQLite's scope_activity.sql and PostgreSQL's migration 020), so a page of scopes reads that table and
counts the memories of the page's scopes alone. It grouped every memory of the tenant on each call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from engramdb.storage.fact_search.sql import Dialect
from engramdb.storage.rows import ScopeColumns, ScopeOrder, ScopePage, ScopePosition, ScopeStats

SCOPE_COLUMN_NAMES = (
    "scope_key",
    "agent_id",
    "profile_id",
    "privacy_scope",
    "participant_scope_hash",
    "sandbox_eligible",
)
COUNTS = (  # the counts of the scopes named after WHERE; read from an index (memories_by_scope_stats in SQLite)
    "SELECT scope_key, sum(CASE WHEN source = 'EPISODE' THEN 1 ELSE 0 END), "
    "sum(CASE WHEN source = 'MEMORY_FACT' THEN 1 ELSE 0 END), "
    "sum(CASE WHEN status = 'pending_review' THEN 1 ELSE 0 END) FROM memories WHERE "
)
_LISTED = (
    "SELECT s.scope_key, s.agent_id, s.profile_id, s.privacy_scope, s.participant_scope_hash, s.sandbox_eligible, "
    "a.last_recorded_at FROM scope_activity a JOIN scopes s ON s.scope_key = a.scope_key"
)


class ScopeListing(Protocol):
    """A tenant store's listing of its scopes (part of ``TenantStore``)."""

    def scope_stats(
        self, bound: Mapping[str, Any], *, order: ScopeOrder, after: ScopePosition | None, limit: int
    ) -> ScopePage:
        """Return a page of ``limit`` scopes that hold memories and whose columns (``SCOPE_COLUMN_NAMES``)
        have the ``bound`` values, in ``order``, after ``after``, with their counts."""
        ...

    def scope_keys(self, bound: Mapping[str, Any]) -> list[str]:
        """Return the keys of every scope that holds memories and has the ``bound`` column values."""
        ...


class ScopeListingSQL:
    """``ScopeListing`` of a tenant store (a base of both backends' tenant stores, which say how they
    read and in which dialect)."""

    _scope_listing_fetch: Callable[[str, Sequence[Any]], list[Any]]
    _scope_listing_dialect: Dialect

    def scope_stats(
        self, bound: Mapping[str, Any], *, order: ScopeOrder, after: ScopePosition | None, limit: int
    ) -> ScopePage:
        d = self._scope_listing_dialect
        sql, params = _listed(d, bound, order, after)
        listed = self._scope_listing_fetch(f"{sql} LIMIT {d.mark}", [*params, limit + 1])
        # The next page starts after this page's last listed scope, also when a scope of the page
        # was emptied before it was counted (it is left out, and the walk goes on past it).
        following = ScopePosition(listed[limit - 1][6], listed[limit - 1][0]) if len(listed) > limit else None
        listed = listed[:limit]
        keys = [r[0] for r in listed]
        if not keys:
            return ScopePage([], following)
        if d.postgres:
            counts = self._scope_listing_fetch(
                f"{COUNTS}tenant = %s AND scope_key = ANY(%s) GROUP BY scope_key", [d.tenant, keys]
            )
        else:
            counts = self._scope_listing_fetch(
                f"{COUNTS}scope_key IN ({','.join('?' * len(keys))}) GROUP BY scope_key", keys
            )
        counted = {str(r[0]): (int(r[1]), int(r[2]), int(r[3])) for r in counts}
        scopes = [
            ScopeStats(ScopeColumns(r[0], r[1], r[2], r[3], r[4], bool(r[5])), *counted[r[0]], str(r[6]))
            for r in listed
            if r[0] in counted
        ]
        return ScopePage(scopes, following)

    def scope_keys(self, bound: Mapping[str, Any]) -> list[str]:
        sql, params = _listed(self._scope_listing_dialect, bound, "key", None)
        return [r[0] for r in self._scope_listing_fetch(sql, params)]


def _listed(
    d: Dialect, bound: Mapping[str, Any], order: ScopeOrder, after: ScopePosition | None
) -> tuple[str, list[Any]]:
    """The scopes with the ``bound`` column values after ``after``: most recently written first
    (``recent``), or by key (``key``: an order no write changes, so a walk meets every scope once)."""
    sql, params = _LISTED, []
    if d.postgres:
        sql += f" AND s.tenant = a.tenant WHERE a.tenant = {d.mark}"
        params.append(d.tenant)
    else:
        sql += " WHERE 1 = 1"
    for column, value in sorted(bound.items()):
        if column not in SCOPE_COLUMN_NAMES:
            raise ValueError(f"not a scope column: {column}")
        sql += f" AND s.{column} = {d.mark}"
        params.append(value)
    if order == "key":
        if after is not None:
            sql += f" AND a.scope_key > {d.mark}"
            params.append(after.scope_key)
        return sql + " ORDER BY a.scope_key", params
    if after is not None:
        sql += f" AND (a.last_recorded_at, a.scope_key) < ({d.mark}, {d.mark})"
        params += [after.at, after.scope_key]
    return sql + " ORDER BY a.last_recorded_at DESC, a.scope_key DESC", params
