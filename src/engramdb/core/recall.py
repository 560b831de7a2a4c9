"""Scoped hybrid recall: both arms filtered by scope and status, fused, then lifecycle features.

The plan: the query is embedded once; the vector arm scores the scope's ready vectors exactly;
the lexical arm ranks the scope's rows by BM25 (so a memory whose vector is still pending is
found the moment its write returns); the two ranked lists are fused, the lexical arm weighing
less when the query's informative words appear in no memory of the scope; then ``ranking.py``
adds the neighbours' lift and the lifecycle features (recency, confidence, source, trust, date)
and keeps the breakdown of every term for ``explain``.

Each stage is a span when the process traces (``engramdb.recall.embed``, ``.search`` holding
``.arms``, ``.fusion``, ``.filter`` and ``.features``): counts and names, never the query.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from engramdb import clock, metrics, traces
from engramdb.config import RetrievalSettings
from engramdb.core import fusion, timeref
from engramdb.core.beside import Beside, beside
from engramdb.core.embedding import Embedder
from engramdb.core.ranking import Hit, Reach, SessionHit, rank
from engramdb.core.relevance import Narrowing, QueryWords, indexed_evidence, relevance
from engramdb.core.when import time_feature
from engramdb.lexical.index import bm25_idf
from engramdb.storage.port import Candidate, CandidateFilter, MemoryRecord, TenantStore, Vector

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
_ALL = Narrowing()
FILTERED_POOL = 4  # how much larger each arm's pool is when recall filters by record


def lexical_terms(query: str) -> list[str]:
    """Return the query's distinct lower-case words, without stopwords unless nothing else is left."""
    # Single letters are contraction debris ("user's" -> "s") and match a third of any corpus.
    words = [w.lower() for w in _WORD.findall(query) if len(w) > 1 or w.isdigit()]
    content = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(content))[:_MAX_TERMS]


@dataclass
class RecallOutcome:
    """Ranked hits (and sessions, when asked) plus how long each stage took (milliseconds)."""

    hits: list[Hit]
    timings: dict[str, float]
    sessions: list[SessionHit] = field(default_factory=list)
    words: QueryWords | None = None  # the query's words as the scope weighs them (for relevance)


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
    pool = max(settings.candidate_pool * (FILTERED_POOL if narrow.filters else 1), limit)
    terms = lexical_terms(query)
    # Only vectors of this embedder are compared: another model's are stale (found by words only).
    searched = replace(filt, vector_model=embedder.model_id)
    lexical = _lexical_beside(store, scope_key, terms, searched, pool, settings) if vector is None else None
    with beside(lexical):  # from here to its end, no helper reads past the block (core/beside.py)
        started = time.perf_counter()
        with traces.span("engramdb.recall.embed", _embedding(embedder, vector is not None)) as embedded:
            vector = embedder.embed([query])[0] if vector is None else vector
            embedded.set_attribute("gen_ai.embeddings.dimension.count", len(vector))
        timings["embedMs"] = (time.perf_counter() - started) * 1000
        metrics.RECALL_STAGE.labels("embed").observe(timings["embedMs"] / 1000)

        started = time.perf_counter()
        measured: dict[int, float] = {}  # the relevance of the rows a floor weighed
        with traces.span("engramdb.recall.search", {"engramdb.recall.limit": limit} if traces.on() else None) as search:
            fused, weights, words = _fused_arms(store, scope_key, terms, vector, searched, pool, settings, lexical)
            if narrow.filters or narrow.min_score is not None:
                with traces.span("engramdb.recall.filter", {"engramdb.recall.candidates": len(fused)}) as filtered:
                    fused, measured = _narrowed(store, scope_key, fused, narrow, words)
                    filtered.set_attribute("engramdb.recall.kept", len(fused))
            with traces.span("engramdb.recall.features", {"engramdb.recall.candidates": len(fused)}):
                when = time_feature(store, scope_key, query, anchor or clock.utc_now(), filt, settings, lexical_terms)
                # A floor, like a record filter, is checked before ranking: nothing may join after it.
                reach = Reach(when, filt, narrow.filters or narrow.min_score is not None, measured)
                hits, ranked_sessions = rank(
                    store, scope_key, query, fused, weights, words, limit, settings, trust_weight, sessions, reach
                )
            search.set_attributes({"engramdb.recall.hits": len(hits), "engramdb.recall.sessions": len(ranked_sessions)})
        timings["searchMs"] = (time.perf_counter() - started) * 1000
    metrics.RECALL_STAGE.labels("search").observe(timings["searchMs"] / 1000)
    return RecallOutcome(hits=hits, timings=timings, sessions=ranked_sessions, words=words)


def _embedding(embedder: Embedder, given: bool) -> dict[str, traces.Value] | None:
    """The query embedding's span attributes (GenAI conventions: an ``embeddings`` operation)."""
    if not traces.on():
        return None
    return {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.request.model": embedder.model_id,
        "engramdb.embedding.given": given,  # embedded beforehand, with other queries in one batch
    }


def _fused_arms(
    store: TenantStore,
    scope_key: str,
    terms: list[str],
    vector: Vector,
    filt: CandidateFilter,
    pool: int,
    settings: RetrievalSettings,
    early: Beside[_Lexical] | None = None,
) -> tuple[fusion.FusedRows, dict[str, float], QueryWords]:
    """Both arms' candidates fused into one ranking, the arms' weights, and the query's words
    (``early``: the lexical arm, started while the query was embedded)."""
    counts = None
    if early is not None:
        terms, lexical, counts = early.result()
    else:
        terms = _informative(store, scope_key, terms, settings.common_term_fraction)
    with traces.span("engramdb.recall.arms", _arms(filt, pool, len(terms))) as searched:
        if early is not None:
            dense = traces.traced_arm("dense", lambda: store.vector_candidates(scope_key, vector, filt, pool))
        else:
            dense, lexical = store.candidates(scope_key, vector, terms, filt, pool)
        searched.set_attributes(
            {"engramdb.recall.dense.count": len(dense), "engramdb.recall.lexical.count": len(lexical)}
        )
    arms = {"dense": dense, "lexical": lexical}  # candidates are (rowid, score) pairs
    for arm, found in arms.items():
        metrics.RECALL_CANDIDATES.labels(arm).observe(len(found))
    with traces.span("engramdb.recall.fusion", {"engramdb.recall.fusion": settings.fusion}) as fusing:
        if counts is None:
            counts = store.term_counts(scope_key, terms) if terms else (0, {})  # one read for both uses
        weights = _arm_weights(counts, terms, settings)
        if settings.fusion == "weighted":
            fused = fusion.weighted(arms, weights)
        else:
            fused = fusion.rrf(arms, weights, k=settings.rrf_k)
        fusing.set_attribute("engramdb.recall.fused", len(fused))
    return fused, weights, QueryWords.of(terms, *counts)


_Lexical = tuple[list[str], list[Candidate], tuple[int, dict[str, int]]]


def _lexical_beside(
    store: TenantStore, scope_key: str, terms: list[str], filt: CandidateFilter, pool: int, settings: RetrievalSettings
) -> Beside[_Lexical] | None:
    """The lexical arm, to run while the model embeds the query (core/beside.py), where the store
    reads it apart from the dense arm at no extra cost (None: ``candidates`` reads both)."""
    if not store.lexical_apart(scope_key):
        return None
    return Beside(lambda: _lexical_arm(store, scope_key, terms, filt, pool, settings))


def _lexical_arm(
    store: TenantStore, scope_key: str, terms: list[str], filt: CandidateFilter, pool: int, settings: RetrievalSettings
) -> _Lexical:
    """The lexical arm's words, its candidates and the words' counts: what needs no query vector."""
    terms = _informative(store, scope_key, terms, settings.common_term_fraction)
    found = traces.traced_arm("lexical", lambda: store.text_candidates(scope_key, terms, filt, pool))
    return terms, found, store.term_counts(scope_key, terms) if terms else (0, {})


def _arms(filt: CandidateFilter, pool: int, terms: int) -> dict[str, traces.Value] | None:
    """The arms' span attributes: the pool, the query's word count, and the lifecycle filter both
    arms apply before scoring (which statuses, sources, and whether it reads another time)."""
    if not traces.on():
        return None
    return {
        "engramdb.recall.pool": pool,
        "engramdb.recall.terms": terms,
        "engramdb.recall.statuses": list(filt.statuses) if filt.statuses is not None else ["any"],
        "engramdb.recall.sources": list(filt.sources),
        "engramdb.recall.as_of": filt.as_of is not None or filt.believed_by is not None,
        "engramdb.recall.valid_at": filt.valid_at is not None,
        "engramdb.recall.excludes_session": filt.exclude_session_id is not None,
    }


def _narrowed(
    store: TenantStore, scope_key: str, fused: fusion.FusedRows, narrow: Narrowing, words: QueryWords
) -> tuple[fusion.FusedRows, dict[int, float]]:
    """The fused rows whose records pass ``narrow``'s filters and relevance floor, and the
    relevance of each row the floor weighed (none without a floor)."""
    rowids = fused.rowids.tolist()
    records = store.records(rowids, with_event=False)
    floor = narrow.min_score
    held = indexed_evidence(store, scope_key, words, records.values()) if floor is not None else {}
    measured: dict[int, float] = {}
    keep = []
    for rowid, raw in zip(rowids, fused.raw_of("dense"), strict=True):
        r = records.get(rowid)
        kept = r is not None and narrow.keeps(r)
        if kept and r is not None and floor is not None:
            measured[rowid] = relevance(raw, words, r, held.get(rowid))
            kept = measured[rowid] >= floor
        keep.append(kept)
    return fused.take(np.array(keep, dtype=bool)), measured


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
