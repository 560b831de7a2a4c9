"""The review queue of a tenant store: its pending facts, oldest first, and how many there are.

Every dashboard page's header shows how many facts await review; it listed up to 1,000 of them,
each made into an answer, to count them (about 60 ms a page with 1,000 waiting). ``count_review``
counts them in the pending facts' index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from engramdb.storage.columns import MEMORY_COLUMNS, equalities, memory_record
from engramdb.storage.fact_search.sql import Dialect
from engramdb.storage.rows import MemoryRecord, ScopeColumns

_WIDTH = len(MEMORY_COLUMNS.split(","))


class ReviewReads(Protocol):
    """A tenant store's review queue (part of ``TenantStore``)."""

    def review_queue(
        self, *, kind: str | None, subject_key: str | None, recorded_before: str | None, limit: int
    ) -> list[tuple[MemoryRecord, ScopeColumns]]:
        """Return pending_review facts of the whole tenant, oldest first, with their scopes."""
        ...

    def count_review(self, *, kind: str | None, subject_key: str | None, recorded_before: str | None) -> int:
        """How many facts of the whole tenant ``review_queue`` would list with no limit."""
        ...


class ReviewReadsSQL:
    """``ReviewReads`` of a tenant store (a base of both backends' tenant stores, which say how they
    read and in which dialect)."""

    _review_fetch: Callable[[str, Sequence[Any]], list[Any]]
    _review_dialect: Dialect

    def review_queue(
        self, *, kind: str | None, subject_key: str | None, recorded_before: str | None, limit: int
    ) -> list[tuple[MemoryRecord, ScopeColumns]]:
        where, params = _pending(self._review_dialect, kind, subject_key, recorded_before)
        rows = self._review_fetch(
            f"SELECT {MEMORY_COLUMNS}, agent_id, profile_id, privacy_scope, participant_scope_hash, sandbox_eligible "
            f"FROM memories WHERE {where} ORDER BY recorded_at, rowid LIMIT {self._review_dialect.mark}",
            [*params, limit],
        )
        w = _WIDTH
        return [
            (memory_record(r[:w]), ScopeColumns(r[3], r[w], r[w + 1], r[w + 2], r[w + 3], bool(r[w + 4]))) for r in rows
        ]

    def count_review(self, *, kind: str | None, subject_key: str | None, recorded_before: str | None) -> int:
        return int(self._review_fetch(*count_statement(self._review_dialect, kind, subject_key, recorded_before))[0][0])


def count_statement(
    d: Dialect, kind: str | None, subject_key: str | None, recorded_before: str | None
) -> tuple[str, list[Any]]:
    """The count of the tenant's facts awaiting review. SQLite is told the pending facts' index: with no
    statistics it counted through the index of every fact by time instead (0.73 s at 200,000 facts)."""
    where, params = _pending(d, kind, subject_key, recorded_before)
    indexed = "" if d.tenant is not None else " INDEXED BY memories_pending_review"
    return f"SELECT count(*) FROM memories{indexed} WHERE {where}", params


def _pending(
    d: Dialect, kind: str | None, subject_key: str | None, recorded_before: str | None
) -> tuple[str, list[Any]]:
    """The condition of the tenant's facts awaiting review, narrowed by the filters given."""
    where = "source = 'MEMORY_FACT' AND status = 'pending_review'"
    params: list[Any] = []
    if d.tenant is not None:
        where, params = f"tenant = {d.mark} AND {where}", [d.tenant]
    named, values = equalities({"kind": kind, "subject_key": subject_key}, d.mark)
    where, params = where + named, params + values
    if recorded_before is not None:
        where += f" AND recorded_at < {d.mark}"
        params.append(recorded_before)
    return where, params
