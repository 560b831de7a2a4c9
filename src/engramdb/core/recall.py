"""Scoped hybrid recall: both arms filtered by scope and status, fused, then lifecycle features.

The plan: the query is embedded once; the vector arm scores the scope's ready vectors exactly;
the lexical arm ranks the scope's rows by BM25 (so a memory whose vector is still pending is
found the moment its write returns); the two ranked lists are fused; recency, confidence, a
source prior and trust (the tenant policy's weight for the memory's trust class and origin) are
added with small weights; the breakdown of every term is kept for ``explain``.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from engramdb import clock
from engramdb.config import RetrievalSettings
from engramdb.core import fusion
from engramdb.core.embedding import Embedder
from engramdb.storage.port import CandidateFilter, MemoryRecord, TenantStore

_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_TERMS = 64
# Function words carry no evidence and match most of a scope.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves""".split()
)
COMMON_FLOOR = 50  # memories a word must be in before it can count as common
_SOURCE_PRIOR = {"MEMORY_FACT": 1.0, "EPISODE": 0.5}  # curated facts above raw turns


def lexical_terms(query: str) -> list[str]:
    """Return the query's distinct lower-case words, without stopwords unless nothing else is left."""
    # Single letters are contraction debris ("user's" -> "s") and match a third of any corpus.
    words = [w.lower() for w in _WORD.findall(query) if len(w) > 1 or w.isdigit()]
    content = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(content))[:_MAX_TERMS]


@dataclass
class Hit:
    """A recalled memory with its final score and the breakdown that produced it."""

    record: MemoryRecord
    score: float
    arms: dict[str, dict[str, float]] = field(default_factory=dict)  # arm -> rank, raw, part
    features: dict[str, float] = field(default_factory=dict)  # feature -> contribution


@dataclass
class RecallOutcome:
    """Ranked hits plus how long each stage took (milliseconds)."""

    hits: list[Hit]
    timings: dict[str, float]


def recency(observed_at: str, now: float, half_life_days: float) -> float:
    """Return 1.0 for a memory from now, halving every ``half_life_days``."""
    age_days = max(0.0, (now - clock.parse(observed_at).timestamp()) / 86_400)
    return math.exp(-math.log(2) * age_days / half_life_days)


def recall(
    store: TenantStore,
    embedder: Embedder,
    *,
    scope_key: str,
    query: str,
    filt: CandidateFilter,
    limit: int,
    settings: RetrievalSettings,
    trust_weight: Callable[[MemoryRecord], float] = lambda record: 1.0,
) -> RecallOutcome:
    """Return the top ``limit`` memories of one scope for ``query``."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    vector = embedder.embed([query])[0]
    timings["embedMs"] = (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    pool = max(settings.candidate_pool, limit)
    dense = store.vector_candidates(scope_key, vector, filt, pool)
    terms = _informative(store, scope_key, lexical_terms(query), settings.common_term_fraction)
    lexical = store.text_candidates(scope_key, terms, filt, pool)
    arms = {
        "dense": [(c.rowid, c.score) for c in dense],
        "lexical": [(c.rowid, c.score) for c in lexical],
    }
    weights = {"dense": settings.dense_weight, "lexical": settings.lexical_weight}
    if settings.fusion == "weighted":
        fused = fusion.weighted(arms, weights)
    else:
        fused = fusion.rrf(arms, weights, k=settings.rrf_k)
    contenders = _contenders(fused, limit, settings)
    records = store.records([f.rowid for f in contenders], with_event=False)
    hits = _with_features(contenders, records, settings, trust_weight)
    timings["searchMs"] = (time.perf_counter() - started) * 1000
    return RecallOutcome(hits=hits[:limit], timings=timings)


def _informative(store: TenantStore, scope_key: str, terms: list[str], fraction: float) -> list[str]:
    """Drop words found in more than ``fraction`` of a large scope's memories (off by default).

    Such a word barely moves BM25 (its IDF is near zero). Skipping it made FTS5 fast enough when
    FTS5 ranked the lexical arm; the in-memory index no longer needs it, and it cost recall
    (bench/RESULTS.md), so ``fraction`` defaults to 1 (never). A word in fewer than
    ``COMMON_FLOOR`` memories is never common, and if the words left match nothing, all are kept.
    """
    if fraction >= 1 or len(terms) < 2:
        return terms
    size, counts = store.term_counts(scope_key, terms)
    threshold = max(fraction * size, COMMON_FLOOR)
    informative = [t for t in terms if counts.get(t, 0) <= threshold]
    if not any(counts.get(t, 0) for t in informative):
        return terms
    return informative


def _contenders(fused: list[fusion.Fused], limit: int, settings: RetrievalSettings) -> list[fusion.Fused]:
    """Rows that can still reach the top ``limit`` once features are added (each is at most 1).

    A row whose fused score trails the ``limit``-th by more than every feature weight together
    can never overtake it, so it is neither fetched nor scored: exact, and much less work.
    """
    if len(fused) <= limit:
        return fused
    headroom = (settings.recency_weight + settings.confidence_weight
                + settings.importance_weight + settings.trust_weight)  # fmt: skip
    floor = fused[limit - 1].score - headroom
    return [f for f in fused if f.score >= floor]


def _with_features(
    fused: Sequence[fusion.Fused],
    records: dict[int, MemoryRecord],
    settings: RetrievalSettings,
    trust_weight: Callable[[MemoryRecord], float],
) -> list[Hit]:
    now = time.time()
    hits: list[Hit] = []
    for row in fused:
        record = records.get(row.rowid)
        if record is None:  # removed between the arms and this read
            continue
        features = {
            "recency": settings.recency_weight
            * recency(record.observed_at, now, settings.recency_half_life_days),
            "confidence": settings.confidence_weight * record.confidence,
            "importance": settings.importance_weight * _SOURCE_PRIOR[record.source],
            "trust": settings.trust_weight * trust_weight(record),
        }
        arms = {
            name: {"rank": row.ranks[name], "raw": row.raw[name], "contribution": row.parts[name]}
            for name in row.ranks
        }
        hits.append(Hit(record, row.score + sum(features.values()), arms, features))
    hits.sort(key=lambda h: (-h.score, h.record.rowid))
    return hits
