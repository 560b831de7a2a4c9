"""The pages of a structured fact search: newest first, or by relevance to a query.

A ranked page is exact however deep: every fact the search matches is scored (the scope copy's
``rank``: approximate cosines bound every row, only the ones that can reach the page are read
back at full precision). A fact's score does not depend on which other facts are ranked beside
it, so ranking the prefix's facts and then keeping those that meet the conditions gives the same
order as ranking only those: the conditions are read for the best few (a few times the page) and
only when those are too few for every fact (the conditions in SQL, then the ranking).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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

    def page(self, tenant: TenantStore, sources: Sources, page: tuple[int, int]) -> list[int]:
        """The rowids of a page (offset, limit) of the matching facts of ``sources``, newest first."""
        return tenant.current_facts(
            self.scopes, subject_prefix=self.subject_prefix, where=self.where, now=self.now, sources=sources, page=page
        )

    def every(self, tenant: TenantStore, sources: Sources, *, conditions: bool = True) -> dict[str, np.ndarray]:
        """Each scope's rowids of the matching facts of ``sources`` (``conditions``: meeting the where)."""
        where = self.where if conditions else []
        return tenant.grouped_facts(
            self.scopes, subject_prefix=self.subject_prefix, where=where, now=self.now, sources=sources
        )

    def count(self, tenant: TenantStore, sources: Sources) -> int:
        return tenant.count_current_facts(
            self.scopes, subject_prefix=self.subject_prefix, where=self.where, now=self.now, sources=sources
        )


@dataclass(frozen=True)
class Ranking:
    """Ranks facts by relevance to one query, in the scopes they are in."""

    tenant: TenantStore
    vector: Vector
    words: list[str]
    model: str

    def top(self, rows: dict[str, np.ndarray], limit: int) -> list[Candidate]:
        """The ``limit`` best of each scope's ``rows`` (each scope ranks its own, then merged), best first."""
        ranked = [
            hit
            for scope_key, rowids in rows.items()
            for hit in self.tenant.rank_facts(scope_key, rowids, self.vector, self.words, limit, self.model)
        ]
        ranked.sort(key=lambda hit: (-hit.score, -hit.rowid))
        return ranked[:limit]


def newest_page(tenant: TenantStore, matching: Matching, body: FactSearch) -> tuple[Page, int | None]:
    """A page newest first, and how many match when asked (count) or when the page tells (the last)."""
    rows = matching.page(tenant, ANY_SOURCE, (body.offset, body.limit))
    page: Page = [(rowid, None) for rowid in rows]
    if body.count:
        return page, matching.count(tenant, ANY_SOURCE)
    return page, _total(len(rows), body)


def ranked_page(ranking: Ranking, matching: Matching, body: FactSearch) -> tuple[Page, int | None]:
    """The page of the ranking: the ranked facts best first, then those of the unranked sources
    newest first; and how many match, where that is known."""
    unranked = tuple(body.unranked_source_event_ids)
    hits, ranked_count = _best(ranking, matching, Sources(without=unranked), body.offset + body.limit)
    page: Page = [(hit.rowid, hit.score) for hit in hits[body.offset :]]
    if not unranked or ranked_count is None:  # None: the ranked facts filled the page, not counted
        return page, ranked_count
    rest = Sources(only=unranked)
    if len(page) < body.limit:  # past the ranked facts: the unranked ones, newest first
        start = max(0, body.offset - ranked_count)
        page += [(rowid, None) for rowid in matching.page(ranking.tenant, rest, (start, body.limit - len(page)))]
    return page, ranked_count + matching.count(ranking.tenant, rest)


def _best(ranking: Ranking, matching: Matching, sources: Sources, wanted: int) -> tuple[list[Candidate], int | None]:
    """The ``wanted`` best matching facts, and how many match in all (None: not counted)."""
    tenant = ranking.tenant
    rows = matching.every(tenant, sources, conditions=False)  # the prefix's facts, from the index alone
    found = sum(len(rowids) for rowids in rows.values())
    if not matching.where:
        return ranking.top(rows, wanted), found
    look = FIRST_LOOK * wanted
    while look < found and look <= LAST_LOOK:
        hits = ranking.top(rows, look)
        meeting = tenant.facts_meeting([hit.rowid for hit in hits], matching.where)
        kept = [hit for hit in hits if hit.rowid in meeting]
        if len(kept) >= wanted:  # the best that meet the conditions are among the best of all
            return kept[:wanted], None
        look *= FIRST_LOOK
    rows = matching.every(tenant, sources)  # few meet them: read the conditions for every fact
    return ranking.top(rows, wanted), sum(len(rowids) for rowids in rows.values())


def _total(found: int, body: FactSearch) -> int | None:
    """How many match in all, where a page tells it: the last page (short, and not past the end)."""
    return body.offset + found if found < body.limit and (found or body.offset == 0) else None
