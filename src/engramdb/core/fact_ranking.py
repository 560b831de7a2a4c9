"""The pages of a structured fact search: newest first, or by relevance to a query.

A ranked page is exact however deep: every fact the search matches is scored (the scope copy's
``rank``: approximate cosines bound every row, only the ones that can reach the page are read
back at full precision). A fact's score does not depend on which other facts are ranked beside
it, so ranking the prefix's facts and then keeping those that meet the conditions gives the same
order as ranking only those: the conditions are read for the best few (a few times the page) and
only when those are too few for every fact. A page newest first reads them for a growing batch of
the newest facts at a time, until the page is full. Either way the facts come from an index of
current facts alone, and a condition is read only for a row found by its key.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engramdb.errors import InvalidInputError
from engramdb.models.fact_search import FactSearch
from engramdb.storage.fact_search.port import ANY_SOURCE, FieldCondition, ScopeMatch, Sources
from engramdb.storage.port import Candidate, TenantStore, Vector

Page = list[tuple[int, float | None]]  # rowids and their scores, in order
FIRST_LOOK = 4  # a ranked page with conditions reads them for this many times the facts it needs first
LAST_LOOK = 4_096  # past this many, the conditions are read for every fact instead


@dataclass(frozen=True)
class Matching:
    """What a search matches: its scopes, subject prefix and conditions, at one time."""

    scopes: ScopeMatch
    subject_prefix: str
    where: list[FieldCondition]
    now: str
    model: str  # the running embedder's: a named scope's copy holds its vectors (and reads the conditions)

    def page(self, tenant: TenantStore, sources: Sources, page: tuple[int, int]) -> list[int]:
        """A page (offset, limit) of the facts under the prefix from ``sources``, newest first (the
        conditions aside)."""
        return tenant.current_facts(
            self.scopes, subject_prefix=self.subject_prefix, now=self.now, sources=sources, page=page
        )

    def every(self, tenant: TenantStore, sources: Sources) -> dict[str, np.ndarray]:
        """Each scope's rowids of the facts under the prefix from ``sources`` (the conditions aside),
        which a ranking or the conditions read next in the scope's copy (which may keep them)."""
        return tenant.grouped_facts(
            self.scopes, subject_prefix=self.subject_prefix, now=self.now, sources=sources, model=self.model
        )

    def meeting(self, tenant: TenantStore, rowids: list[int] | np.ndarray) -> set[int]:
        """Those of ``rowids`` that meet the conditions (one scope named: read in its copy)."""
        scope_key = self.scopes.scope_key
        return tenant.facts_meeting(rowids, self.where, None if scope_key is None else (scope_key, self.model))

    def count(self, tenant: TenantStore, sources: Sources) -> int:
        """How many facts under the prefix from ``sources`` there are (the conditions aside)."""
        return tenant.count_current_facts(
            self.scopes, subject_prefix=self.subject_prefix, now=self.now, sources=sources
        )


# Each scope ranks in its in-memory copy: a tenant-wide query over 21,000 scopes built all of their
# copies (41-45 s and 1.2 GB, evicting every other scope's copy; a review helper's script).
MAX_RANKED_SCOPES = 100


@dataclass(frozen=True)
class Ranking:
    """Ranks facts by relevance to one query, in the scopes they are in."""

    tenant: TenantStore
    vector: Vector
    words: list[str]
    model: str

    def top(self, rows: dict[str, np.ndarray], limit: int) -> list[Candidate]:
        """The ``limit`` best of each scope's ``rows`` (each scope ranks its own, then merged), best first."""
        if len(rows) > MAX_RANKED_SCOPES:
            raise InvalidInputError(
                f"a query ranks the facts of each scope in its own copy, and this search spans {len(rows):,} "
                f"scopes (at most {MAX_RANKED_SCOPES}): name the scope fields that narrow it, or search "
                "without a query (newest first)",
                field="query",
            )
        ranked = [
            hit
            for scope_key, rowids in rows.items()
            for hit in self.tenant.rank_facts(scope_key, rowids, self.vector, self.words, limit, self.model)
        ]
        ranked.sort(key=lambda hit: (-hit.score, -hit.rowid))
        return ranked[:limit]


def newest_page(tenant: TenantStore, matching: Matching, body: FactSearch) -> tuple[Page, int | None]:
    """A page newest first, and how many match when asked (count) or when the page tells (the last)."""
    if matching.where:
        rows, total = _newest_meeting(tenant, matching, ANY_SOURCE, (body.offset, body.limit), every=body.count)
        return [(rowid, None) for rowid in rows], total
    rows = matching.page(tenant, ANY_SOURCE, (body.offset, body.limit))
    total = matching.count(tenant, ANY_SOURCE) if body.count else _total(len(rows), body)
    return [(rowid, None) for rowid in rows], total


def ranked_page(ranking: Ranking, matching: Matching, body: FactSearch) -> tuple[Page, int | None]:
    """The page of the ranking: the ranked facts best first, then those of the unranked sources
    newest first; and how many match, where that is known."""
    unranked = tuple(body.unranked_source_event_ids)
    hits, ranked_count = _best(ranking, matching, Sources(without=unranked), body.offset + body.limit)
    page: Page = [(hit.rowid, hit.score) for hit in hits[body.offset :]]
    if not unranked or ranked_count is None:  # None: the ranked facts filled the page, not counted
        return page, ranked_count
    rest, start = Sources(only=unranked), max(0, body.offset - ranked_count)
    if not matching.where:
        tail = matching.page(ranking.tenant, rest, (start, body.limit - len(page))) if len(page) < body.limit else []
        rest_count = sum(len(rowids) for rowids in matching.every(ranking.tenant, rest).values())
        return page + [(rowid, None) for rowid in tail], ranked_count + rest_count
    tail, unranked_count = _newest_meeting(ranking.tenant, matching, rest, (start, body.limit - len(page)), every=True)
    return page + [(rowid, None) for rowid in tail], ranked_count + (unranked_count or 0)


def _best(ranking: Ranking, matching: Matching, sources: Sources, wanted: int) -> tuple[list[Candidate], int | None]:
    """The ``wanted`` best matching facts, and how many match in all (None: not counted)."""
    tenant = ranking.tenant
    rows = matching.every(tenant, sources)  # the prefix's facts, from the index (or kept)
    found = sum(len(rowids) for rowids in rows.values())
    if not matching.where:
        return ranking.top(rows, wanted), found
    look = FIRST_LOOK * wanted
    while look < found and look <= LAST_LOOK:
        hits = ranking.top(rows, look)
        meeting = matching.meeting(tenant, [hit.rowid for hit in hits])
        kept = [hit for hit in hits if hit.rowid in meeting]
        if len(kept) >= wanted:  # the best that meet the conditions are among the best of all
            return kept[:wanted], None
        look *= FIRST_LOOK
    # Few meet them: read the conditions for every fact, then rank those that meet them.
    meeting_rows = {key: _meeting(tenant, matching, rowids) for key, rowids in rows.items()}
    return ranking.top(meeting_rows, wanted), sum(len(rowids) for rowids in meeting_rows.values())


def _newest_meeting(
    tenant: TenantStore, matching: Matching, sources: Sources, page: tuple[int, int], *, every: bool
) -> tuple[list[int], int | None]:
    """A page (offset, limit) of the facts meeting the conditions, newest first: the conditions are
    read for the newest few first; past them, one scope's copy reads them for every fact at once
    and the few that meet them are put in order, while across scopes they are read for growing
    batches of the rest (listed once, newest first). And how many meet them when every fact was
    read (``every``: read every fact, to count them)."""
    needed = page[0] + page[1]
    first = max(64, FIRST_LOOK * needed)
    rows = matching.page(tenant, sources, (0, first))
    meeting = matching.meeting(tenant, rows)
    kept = [rowid for rowid in rows if rowid in meeting]
    if len(kept) >= needed and not every:
        return kept[page[0] : needed], None
    if len(rows) < first:  # the first look saw every fact
        return kept[page[0] : needed], len(kept)
    if matching.scopes.scope_key is not None:
        met = [_meeting(tenant, matching, rowids) for rowids in matching.every(tenant, sources).values()]
        found = np.concatenate(met).tolist() if met else []
        return tenant.facts_newest_first(found, page), len(found)
    rest = matching.page(tenant, sources, (first, 2**62))
    start, size = 0, first
    while start < len(rest):
        rows, start, size = rest[start : start + size], start + size, min(size * FIRST_LOOK, LAST_LOOK)
        meeting = matching.meeting(tenant, rows)
        kept += [rowid for rowid in rows if rowid in meeting]
        if len(kept) >= needed and not every:
            return kept[page[0] : needed], None
    return kept[page[0] : needed], len(kept)


def _meeting(tenant: TenantStore, matching: Matching, rowids: np.ndarray) -> np.ndarray:
    meeting = matching.meeting(tenant, rowids)
    return rowids[np.isin(rowids, np.fromiter(meeting, dtype=np.int64, count=len(meeting)))]


def _total(found: int, body: FactSearch) -> int | None:
    """How many match in all, where a page tells it: the last page (short, and not past the end)."""
    return body.offset + found if found < body.limit and (found or body.offset == 0) else None
