"""Scoped hybrid recall: both arms filtered by scope and status, fused, then lifecycle features.

The plan: the query is embedded once; the vector arm scores the scope's ready vectors exactly;
the lexical arm ranks the scope's rows by BM25 (so a memory whose vector is still pending is
found the moment its write returns); the two ranked lists are fused, the lexical arm weighing
less when the query's informative words appear in no memory of the scope; recency, confidence,
a source prior, trust (the tenant policy's weight for the memory's trust class and origin) and,
when the query names a date, closeness to it are added; the breakdown of every term is kept
for ``explain``.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from engramdb import clock, metrics
from engramdb.config import RetrievalSettings
from engramdb.core import fusion, timeref
from engramdb.core.embedding import Embedder
from engramdb.core.relevance import Narrowing, QueryWords, relevance
from engramdb.lexical.index import bm25_idf
from engramdb.storage.port import CandidateFilter, MemoryRecord, TenantStore, Vector

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
_ALL = Narrowing()
FILTERED_POOL = 4  # how much larger each arm's pool is when recall filters by record


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
    arms: dict[str, dict[str, float]] = field(default_factory=dict)  # arm -> rank, raw, contribution, weight
    features: dict[str, float] = field(default_factory=dict)  # feature -> contribution
    relevance: float = 0.0  # absolute match with the query (core/relevance.py)
    via: tuple[str, str] | None = None  # expansion: (relationship type, id of the hit linking it)


@dataclass
class SessionHit:
    """A session ranked by its best-matching episode, with its matching rows best first."""

    session_id: str
    score: float
    records: list[MemoryRecord]


@dataclass
class RecallOutcome:
    """Ranked hits (and sessions, when asked) plus how long each stage took (milliseconds)."""

    hits: list[Hit]
    timings: dict[str, float]
    sessions: list[SessionHit] = field(default_factory=list)
    words: QueryWords | None = None  # the query's words as the scope weighs them (for relevance)


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
    sessions: int = 0,
    narrow: Narrowing = _ALL,
    vector: Vector | None = None,
) -> RecallOutcome:
    """Return the top ``limit`` memories of one scope for ``query`` (and its top ``sessions``).

    ``narrow`` keeps only memories whose fields pass its filters and whose relevance reaches its
    floor; with filters the arms' pools are ``FILTERED_POOL`` times larger, since the filters
    apply to what the arms return. ``vector`` is the query's embedding when the caller already
    has it (several queries embedded in one batch).
    """
    timings: dict[str, float] = {}
    started = time.perf_counter()
    vector = embedder.embed([query])[0] if vector is None else vector
    timings["embedMs"] = (time.perf_counter() - started) * 1000
    metrics.RECALL_STAGE.labels("embed").observe(timings["embedMs"] / 1000)

    started = time.perf_counter()
    pool = max(settings.candidate_pool * (FILTERED_POOL if narrow.filters else 1), limit)
    # Only vectors of this embedder are compared: another model's are stale (found by words only).
    fused, weights, words = _fused_arms(
        store, scope_key, query, vector, replace(filt, vector_model=embedder.model_id), pool, settings
    )
    if narrow.filters or narrow.min_score is not None:
        fused = _narrowed(store, fused, narrow, words)
    date = _date_feature(query, settings)
    headroom = _headroom(settings, dated=date is not None)
    lift = _neighbour_lift(
        store,
        scope_key,
        fused,
        settings.neighbour_weight,
        settings.second_neighbour_weight,
        floor=_lift_floor(fused, limit, settings, headroom) if sessions == 0 else None,
    )
    contenders = _contenders(fused, lift, limit, headroom)
    # Sessions need every candidate's record; the contenders' records are among them.
    records = store.records([f.rowid for f in (fused if sessions > 0 else contenders)], with_event=False)
    total = sum(weights.values()) or 1.0
    shares = {name: weight / total for name, weight in weights.items()}
    hits = _with_features(contenders, lift, records, settings, trust_weight, date, shares)[:limit]
    for hit in hits:  # only what is returned: relevance reads each text's words
        hit.relevance = relevance(hit.arms.get("dense", {}).get("raw"), words, hit.record)
    ranked_sessions = _sessions(fused, lift, records, sessions, date) if sessions > 0 else []
    timings["searchMs"] = (time.perf_counter() - started) * 1000
    metrics.RECALL_STAGE.labels("search").observe(timings["searchMs"] / 1000)
    return RecallOutcome(hits=hits, timings=timings, sessions=ranked_sessions, words=words)


def _fused_arms(
    store: TenantStore,
    scope_key: str,
    query: str,
    vector: Vector,
    filt: CandidateFilter,
    pool: int,
    settings: RetrievalSettings,
) -> tuple[list[fusion.Fused], dict[str, float], QueryWords]:
    """Both arms' candidates fused into one ranking, the arms' weights, and the query's words."""
    terms = _informative(store, scope_key, lexical_terms(query), settings.common_term_fraction)
    dense, lexical = store.candidates(scope_key, vector, terms, filt, pool)
    arms = {"dense": [(c.rowid, c.score) for c in dense], "lexical": [(c.rowid, c.score) for c in lexical]}
    for arm, found in arms.items():
        metrics.RECALL_CANDIDATES.labels(arm).observe(len(found))
    counts = store.term_counts(scope_key, terms) if terms else (0, {})  # one read for both uses
    weights = _arm_weights(counts, terms, settings)
    if settings.fusion == "weighted":
        fused = fusion.weighted(arms, weights)
    else:
        fused = fusion.rrf(arms, weights, k=settings.rrf_k)
    return fused, weights, QueryWords.of(terms, *counts)


def _narrowed(
    store: TenantStore, fused: list[fusion.Fused], narrow: Narrowing, words: QueryWords
) -> list[fusion.Fused]:
    """The fused rows whose records pass ``narrow``'s filters and relevance floor."""
    records = store.records([f.rowid for f in fused], with_event=False)
    floor = narrow.min_score
    return [
        f
        for f in fused
        if (r := records.get(f.rowid)) is not None
        and narrow.keeps(r)
        and (floor is None or relevance(f.raw.get("dense"), words, r) >= floor)
    ]


def _sessions(
    fused: list[fusion.Fused],
    lift: dict[int, float],
    records: dict[int, MemoryRecord],
    limit: int,
    date: DateFeature | None,
) -> list[SessionHit]:
    """Rank the sessions of every candidate episode (both arms' pools, not only the top
    ``limit`` memories) by their best episode's score, so a session is found even when other
    sessions fill the memory list."""
    scored: list[tuple[float, int, str, MemoryRecord]] = []
    for row in fused:
        record = records.get(row.rowid)
        if record is None or record.source != "EPISODE" or record.session_id is None:
            continue
        score = row.score + lift.get(row.rowid, 0.0) + (date(record) if date else 0.0)
        scored.append((score, row.rowid, record.session_id, record))
    best: dict[str, SessionHit] = {}
    for score, _, session_id, record in sorted(scored, key=lambda s: (-s[0], s[1])):
        hit = best.get(session_id)
        if hit is None:  # rows come best first: the first one seen sets the session's score
            hit = best[session_id] = SessionHit(session_id, score, [])
        hit.records.append(record)
    return list(best.values())[:limit]


def _arm_weights(
    counted: tuple[int, dict[str, int]], terms: list[str], settings: RetrievalSettings
) -> dict[str, float]:
    """Return the arms' fusion weights for this query.

    A word no memory of the scope contains is part of the question the lexical arm cannot see
    (a paraphrase: "phone battery" asked of "power bank"), yet min-max normalisation would still
    give the arm's best partial match a full score. So the lexical weight is multiplied by the
    share of the query's word information (BM25's IDF, summed) that the scope can match, to the
    power ``lexical_coverage_exponent``. Dates and numbers are left out of the share: they live
    in ``observedAt``, not in the text, and the date feature reads them.
    """
    weights = {"dense": settings.dense_weight, "lexical": settings.lexical_weight}
    exponent = settings.lexical_coverage_exponent
    if exponent <= 0 or settings.dense_weight <= 0 or settings.lexical_weight <= 0:
        return weights
    words = [t for t in terms if not timeref.is_date_word(t)]
    if not words:
        return weights
    size, counts = counted
    weights["lexical"] *= coverage(size, [counts.get(w, 0) for w in words]) ** exponent
    return weights


def coverage(size: int, frequencies: Sequence[int]) -> float:
    """Return the share of the words' IDF mass carried by words found in at least one of ``size``
    documents (1.0 when there is nothing to weigh)."""
    if size <= 0:
        return 1.0
    idf = [bm25_idf(size, f) for f in frequencies]
    total = sum(idf)
    return sum(w for w, f in zip(idf, frequencies, strict=True) if f > 0) / total if total > 0 else 1.0


DateFeature = Callable[[MemoryRecord], float]


def _date_feature(query: str, settings: RetrievalSettings) -> DateFeature | None:
    """Return the date feature for ``query`` (None when it names no date or the weight is 0):
    ``date_weight`` times how close a memory's ``observedAt`` is to a date the query names."""
    refs = timeref.date_refs(query) if settings.date_weight > 0 else []
    if not refs:
        return None

    def feature(record: MemoryRecord) -> float:
        observed = clock.parse(record.observed_at).date()
        return settings.date_weight * timeref.closeness(
            observed, refs, after_days=settings.date_after_days, decay_days=settings.date_decay_days
        )

    return feature


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


def _headroom(settings: RetrievalSettings, *, dated: bool) -> float:
    """The most the features can add to a row's score (each feature is at most 1; the date
    feature counts only when the query names a date)."""
    features = settings.recency_weight + settings.confidence_weight + settings.importance_weight + settings.trust_weight
    return features + (settings.date_weight if dated else 0.0)


def _lift_floor(fused: list[fusion.Fused], limit: int, settings: RetrievalSettings, headroom: float) -> float | None:
    """The fused score below which no lift and no feature can bring a row into the top ``limit``."""
    if len(fused) <= limit:
        return None
    reach = (settings.neighbour_weight + settings.second_neighbour_weight) * fused[0].score
    return fused[limit - 1].score - reach - headroom


def _neighbour_lift(
    store: TenantStore,
    scope_key: str,
    fused: list[fusion.Fused],
    weight: float,
    weight_2: float = 0.0,
    *,
    floor: float | None = None,
) -> dict[int, float]:
    """Lend each episode ``weight`` times the best fused score of the turns next to it, and
    ``weight_2`` times the best of the turns two away (neighbours: written just before and after
    in the same session; only rows the arms found, so only eligible ones, lend).

    A turn often answers a question only with the turns around it ("what game was it?" -> the
    answer), so a turn near a strong match is likelier evidence than its own words say.
    Measured on LoCoMo and the held-out set (bench/RESULTS.md).
    """
    if (weight <= 0 and weight_2 <= 0) or not fused:
        return {}
    ids = np.array([f.rowid for f in fused], dtype=np.int64)  # every candidate lends
    order = np.argsort(ids)
    known, known_score = ids[order], np.array([f.score for f in fused])[order]

    def score_of(rowids: np.ndarray) -> np.ndarray:
        """The fused score of each rowid, 0 for -1 and for rows the arms did not find."""
        at = np.minimum(np.searchsorted(known, rowids), len(known) - 1)
        return np.where(known[at] == rowids, known_score[at], 0.0)

    # Only rows that can still rise into the top borrow (their neighbours are looked up).
    borrowers = ids if floor is None else ids[np.array([f.score >= floor for f in fused])]
    before, after = store.adjacent(scope_key, borrowers.tolist())
    lift = weight * np.maximum(score_of(before), score_of(after))
    if weight_2 > 0:  # one lookup: the turn before the one before, and after the one after
        beyond_before, beyond_after = store.adjacent(scope_key, np.concatenate([before, after]).tolist())
        far = np.maximum(score_of(beyond_before[: len(before)]), score_of(beyond_after[len(before) :]))
        lift += weight_2 * far
    lifted = np.flatnonzero(lift > 0)
    return dict(zip(borrowers[lifted].tolist(), lift[lifted].tolist(), strict=True))


def _contenders(fused: list[fusion.Fused], lift: dict[int, float], limit: int, headroom: float) -> list[fusion.Fused]:
    """Rows that can still reach the top ``limit`` once features are added (each is at most 1).

    A row whose score trails the ``limit``-th best by more than every feature weight together
    can never overtake it, so it is neither fetched nor scored: exact, and much less work.
    """
    if len(fused) <= limit:
        return fused
    base = sorted((f.score + lift.get(f.rowid, 0.0) for f in fused), reverse=True)
    floor = base[limit - 1] - headroom
    return [f for f in fused if f.score + lift.get(f.rowid, 0.0) >= floor]


def _with_features(
    fused: Sequence[fusion.Fused],
    lift: dict[int, float],
    records: dict[int, MemoryRecord],
    settings: RetrievalSettings,
    trust_weight: Callable[[MemoryRecord], float],
    date: DateFeature | None,
    shares: dict[str, float],
) -> list[Hit]:
    now = clock.utc_now().timestamp()
    hits: list[Hit] = []
    for row in fused:
        record = records.get(row.rowid)
        if record is None:  # removed between the arms and this read
            continue
        features = {
            "recency": settings.recency_weight * recency(record.observed_at, now, settings.recency_half_life_days),
            "confidence": settings.confidence_weight * record.confidence,
            "importance": settings.importance_weight * _SOURCE_PRIOR[record.source],
            "trust": settings.trust_weight * trust_weight(record),
        }
        if settings.neighbour_weight > 0 or settings.second_neighbour_weight > 0:
            features["neighbours"] = lift.get(row.rowid, 0.0)
        if date:
            features["date"] = date(record)
        arms = {
            name: {
                "rank": row.ranks[name],
                "raw": row.raw[name],
                "contribution": row.parts[name],
                "weight": shares[name],
            }
            for name in row.ranks
        }
        hits.append(Hit(record, row.score + sum(features.values()), arms, features))
    hits.sort(key=lambda h: (-h.score, h.record.rowid))
    return hits
