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

import datetime as dt
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from engramdb import clock, metrics
from engramdb.config import RetrievalSettings
from engramdb.core import fusion, timeref
from engramdb.core.embedding import Embedder
from engramdb.core.entity_links import admitted_rows, entity_lift
from engramdb.core.neighbours import DateFeature, SessionHit, contenders, lift_floor, neighbour_lift, rank_sessions
from engramdb.core.relevance import Narrowing, QueryWords, relevance
from engramdb.core.when import time_feature
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
    replaced_by: str | None = None  # the id of a newer recalled memory that states another value (core/conflicts.py)


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
    anchor: dt.datetime | None = None,
) -> RecallOutcome:
    """Return the top ``limit`` memories of one scope for ``query`` (and its top ``sessions``).

    ``narrow`` keeps only memories whose fields pass its filters and whose relevance reaches its
    floor; with filters the arms' pools are ``FILTERED_POOL`` times larger, since the filters
    apply to what the arms return. ``vector`` is the query's embedding when the caller already
    has it (several queries embedded in one batch). ``anchor`` is the question's time, against which
    its relative time words resolve (default now).
    """
    timings: dict[str, float] = {}
    started = time.perf_counter()
    vector = embedder.embed([query])[0] if vector is None else vector
    timings["embedMs"] = (time.perf_counter() - started) * 1000
    metrics.RECALL_STAGE.labels("embed").observe(timings["embedMs"] / 1000)

    started = time.perf_counter()
    pool = max(settings.candidate_pool * (FILTERED_POOL if narrow.filters else 1), limit)
    # Only vectors of this embedder are compared: another model's are stale (found by words only).
    fused, weights, words, size = _fused_arms(
        store, scope_key, query, vector, replace(filt, vector_model=embedder.model_id), pool, settings
    )
    if narrow.filters or narrow.min_score is not None:
        fused = _narrowed(store, fused, narrow, words)
    date = _date_feature(query, settings)
    when = time_feature(store, scope_key, query, anchor or clock.utc_now(), filt, settings, lexical_terms)
    headroom = _headroom(settings, dated=date is not None, timed=when is not None)
    floor = lift_floor(fused, limit, settings, headroom) if sessions == 0 else None
    lift = neighbour_lift(
        store, scope_key, fused, settings.neighbour_weight, settings.second_neighbour_weight, floor=floor
    )
    fused, linked = _entity_linked(store, scope_key, fused, lift, size, filt, settings, narrow.filters)
    raised = {r: lift.get(r, 0.0) + linked.get(r, 0.0) for r in lift.keys() | linked.keys()}
    rivals = contenders(fused, raised, limit, headroom)
    # Sessions need every candidate's record; the contenders' records are among them.
    records = store.records([f.rowid for f in (fused if sessions > 0 else rivals)], with_event=False)
    total = sum(weights.values()) or 1.0
    shares = {name: weight / total for name, weight in weights.items()}
    features = _Features(settings, trust_weight, lift, linked, date, when)
    hits = _with_features(rivals, records, features, shares)[:limit]
    for hit in hits:  # only what is returned: relevance reads each text's words
        hit.relevance = relevance(hit.arms.get("dense", {}).get("raw"), words, hit.record)
    ranked_sessions = rank_sessions(fused, raised, records, sessions, date) if sessions > 0 else []
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
) -> tuple[list[fusion.Fused], dict[str, float], QueryWords, int]:
    """Both arms' candidates fused into one ranking, the arms' weights, the query's words, and how
    many memories the scope holds."""
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
    return fused, weights, QueryWords.of(terms, *counts), counts[0]


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


def _headroom(settings: RetrievalSettings, *, dated: bool, timed: bool = False) -> float:
    """The most the features can add to a row's score (each feature is at most 1; the date and
    time-words features count only when the query names a date or relative time)."""
    features = settings.recency_weight + settings.confidence_weight + settings.importance_weight + settings.trust_weight
    return features + (settings.date_weight if dated else 0.0) + (settings.time_words_weight if timed else 0.0)


def _entity_linked(
    store: TenantStore,
    scope_key: str,
    fused: list[fusion.Fused],
    lift: dict[int, float],
    size: int,
    filt: CandidateFilter,
    settings: RetrievalSettings,
    filtered: bool,
) -> tuple[list[fusion.Fused], dict[int, float]]:
    """The entity lift (``core/entity_links.py``) from the top rows, and the candidates with the rows
    found only through an entity (when the recall's filter admits them; none under record filters)."""
    if settings.entity_weight <= 0 or settings.entity_seeds <= 0 or not fused:
        return fused, {}
    top = sorted(fused, key=lambda f: (-(f.score + lift.get(f.rowid, 0.0)), f.rowid))[: settings.entity_seeds]
    seeds = [(f.rowid, kind, f.score + lift.get(f.rowid, 0.0)) for f in top for kind in ("EPISODE", "MEMORY_FACT")]
    linked = entity_lift(store, scope_key, seeds, size, settings)
    known = {f.rowid for f in fused}
    new = [] if filtered else admitted_rows(store, scope_key, [r for r in linked if r not in known], filt)
    kept = known | set(new)
    linked = {r: v for r, v in linked.items() if r in kept}
    return [*fused, *(fusion.Fused(r, 0.0) for r in sorted(new))], linked


@dataclass(frozen=True)
class _Features:
    """What the lifecycle features read: the settings, the trust policy, the lifts, the query's dates."""

    settings: RetrievalSettings
    trust_weight: Callable[[MemoryRecord], float]
    lift: dict[int, float]
    linked: dict[int, float]
    date: DateFeature | None
    when: DateFeature | None


def _with_features(
    fused: Sequence[fusion.Fused],
    records: dict[int, MemoryRecord],
    f: _Features,
    shares: dict[str, float],
) -> list[Hit]:
    now = clock.utc_now().timestamp()
    settings = f.settings
    hits: list[Hit] = []
    for row in fused:
        record = records.get(row.rowid)
        if record is None:  # removed between the arms and this read
            continue
        features = {
            "recency": settings.recency_weight * recency(record.observed_at, now, settings.recency_half_life_days),
            "confidence": settings.confidence_weight * record.confidence,
            "importance": settings.importance_weight * _SOURCE_PRIOR[record.source],
            "trust": settings.trust_weight * f.trust_weight(record),
        }
        if settings.neighbour_weight > 0 or settings.second_neighbour_weight > 0:
            features["neighbours"] = f.lift.get(row.rowid, 0.0)
        if row.rowid in f.linked:
            features["entities"] = f.linked[row.rowid]
        if f.date:
            features["date"] = f.date(record)
        if f.when:
            features["timeWords"] = f.when(record)
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
