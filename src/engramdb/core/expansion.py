"""Recall's one-hop expansion: what its top hits link to.

A fact recalled brings the episode it was derived from; an episode brings the facts derived from
it; either brings the records linked to it (a DECISION, a TASK, the ENTITY it mentions). Linked
memories pass the same lifecycle filter as the hits (a retracted fact never returns this way)
and compete for the same places, scored at a share of the hit that links them; linked records
are listed beside the memories. A recall's filters and ``minScore`` hold for linked memories too:
a linked memory's relevance is the larger of its own lexical evidence and the same share of its
linking hit's relevance (its cosine is not at hand), so nothing below the floor arrives this way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engramdb.core.knowledge.paging import rows_that_fit
from engramdb.core.ranking import Hit
from engramdb.core.relevance import Narrowing, QueryWords, indexed_evidence
from engramdb.storage.knowledge.port import NodeRef, RecordRow
from engramdb.storage.port import CandidateFilter, MemoryRecord, TenantStore

MAX_RECORDS = 10  # linked records listed beside the memories


@dataclass(frozen=True)
class LinkedRecord:
    row: RecordRow
    score: float
    via: str  # the relationship's type
    linked_from: str  # the id of the hit it is linked to


@dataclass(frozen=True)
class Expansion:
    hits: list[Hit]  # the hits and the linked memories, best first, at most ``limit``
    records: list[LinkedRecord]


def expand(
    tenant: TenantStore,
    scope_key: str,
    hits: Sequence[Hit],
    filt: CandidateFilter,
    *,
    top: int,
    weight: float,
    limit: int,
    narrow: Narrowing | None = None,
    words: QueryWords | None = None,
) -> Expansion:
    """Follow the relationships of the first ``top`` hits one hop (linked memories pass ``narrow``)."""
    seeds = {NodeRef(h.record.source, h.record.rowid): h for h in hits[:top]}
    memories: dict[int, tuple[float, str, str]] = {}  # rowid -> (score, via, linked from)
    derived: dict[int, float] = {}  # rowid -> the best relevance a linking hit lends it
    records: dict[int, tuple[float, str, str]] = {}
    for edge in tenant.edges(scope_key, list(seeds)):
        for near, far in ((edge.source, edge.target), (edge.target, edge.source)):
            seed = seeds.get(near)
            if seed is None or far in seeds:
                continue
            found = (seed.score * weight, edge.type, seed.record.memory_id)
            pool = records if far.kind == "RECORD" else memories
            if far.rowid not in pool or pool[far.rowid][0] < found[0]:
                pool[far.rowid] = found
            if pool is memories:
                derived[far.rowid] = max(derived.get(far.rowid, 0.0), seed.relevance * weight)
    # A hit that is also linked keeps the better of its own score and the link's.
    direct = {h.record.rowid: h for h in hits if h.score >= memories.get(h.record.rowid, (0.0,))[0]}
    wanted = [r for r in memories if r not in direct]
    admitted = tenant.admitted(scope_key, wanted, filt)
    rows = tenant.records(admitted, with_event=False)
    evidence = _evidence(tenant, scope_key, words, rows)
    linked = [
        Hit(
            rows[r],
            memories[r][0],
            features={"linked": memories[r][0]},
            via=memories[r][1:],
            relevance=max(derived[r], evidence.get(r, 0.0)),
        )
        for r in admitted
        if r in rows
    ]
    if narrow is not None:
        floor = narrow.min_score
        linked = [h for h in linked if narrow.keeps(h.record) and (floor is None or h.relevance >= floor)]
    ranked = sorted([*direct.values(), *linked], key=lambda h: (-h.score, h.record.rowid))[:limit]
    # The best linked records by their keys, then the properties of those the answer has room for: a
    # hit linked to 14 records of 875 KB loaded them all and answered 8.8 MB (a review).
    keys = tenant.record_keys(scope_key, list(records))
    best = sorted((r for r in records if r in keys), key=lambda r: (-records[r][0], keys[r][1]))[:MAX_RECORDS]
    sizes = tenant.record_sizes(scope_key, best)
    fit, _ = rows_that_fit(tenant, scope_key, [(r, sizes[r]) for r in best if r in sizes])
    return Expansion(ranked, [LinkedRecord(row, *records[row.rowid]) for row in fit])


def _evidence(
    tenant: TenantStore, scope_key: str, words: QueryWords | None, rows: dict[int, MemoryRecord]
) -> dict[int, float]:
    """The linked memories' own lexical evidence (none without the query's words)."""
    if words is None:
        return {}
    held = indexed_evidence(tenant, scope_key, words, rows.values())
    return {r: held[r] if r in held else words.body_evidence(record) for r, record in rows.items()}
