"""Ranking what the arms found, once fused: neighbours lend, the lifecycle features are added.

A turn next to a strong match borrows part of its score; then recency, confidence, a source
prior, trust (the tenant policy's weight for the memory's trust class and origin) and, when the
query names a date, closeness to it are added to each row's fused score, and the breakdown of
every term is kept for ``explain``. Rows that cannot reach the top whatever the features add are
neither fetched nor scored. Sessions are ranked by their best episode.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from engramdb import clock
from engramdb.config import RetrievalSettings
from engramdb.core import fusion, timeref
from engramdb.core.entity_links import linked_rows
from engramdb.core.relevance import QueryWords, indexed_evidence, relevance
from engramdb.core.rows import holds_exchange
from engramdb.storage.port import CandidateFilter, MemoryRecord, TenantStore

_SOURCE_PRIOR = {"MEMORY_FACT": 1.0, "EPISODE": 0.5}  # curated facts above raw turns


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
class SessionHit:
    """A session ranked by its best-matching episode, with its matching rows best first."""

    session_id: str
    score: float
    records: list[MemoryRecord]


DateFeature = Callable[[MemoryRecord], float]


@dataclass(frozen=True)
class Reach:
    """What ranking reads beyond the fused rows: the question's time-words feature (``core/when.py``),
    the lifecycle filter a row found only through an entity must pass (None: no such row joins),
    whether record filters or a relevance floor narrow the recall (then no row joins through an
    entity either: it would not have been checked against them), and the
    relevance of the rows a relevance floor weighed (measured then: not measured again)."""

    when: DateFeature | None = None
    filt: CandidateFilter | None = None
    filtered: bool = False
    relevance: Mapping[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class _Features:
    """What the lifecycle features read: the settings, the trust policy, the lifts, the query's times."""

    settings: RetrievalSettings
    trust_weight: Callable[[MemoryRecord], float]
    lift: dict[int, float]
    linked: dict[int, float]
    date: DateFeature | None
    when: DateFeature | None


def recency(observed_at: str, now: float, half_life_days: float) -> float:
    """Return 1.0 for a memory from now, halving every ``half_life_days``."""
    age_days = max(0.0, (now - clock.parse(observed_at).timestamp()) / 86_400)
    return math.exp(-math.log(2) * age_days / half_life_days)


def rank(
    store: TenantStore,
    scope_key: str,
    query: str,
    fused: fusion.FusedRows,
    weights: dict[str, float],
    words: QueryWords,
    limit: int,
    settings: RetrievalSettings,
    trust_weight: Callable[[MemoryRecord], float],
    sessions: int,
    reach: Reach = Reach(),
) -> tuple[list[Hit], list[SessionHit]]:
    """The top ``limit`` hits of the fused rows once neighbours and entity links lend and the
    lifecycle features (recency, confidence, source, trust, date, time words) are added, with their
    relevance; and the sessions."""
    date = _date_feature(query, settings)
    headroom = _headroom(settings, dated=date is not None, timed=reach.when is not None)
    lift = _neighbour_lift(
        store,
        scope_key,
        fused,
        settings.neighbour_weight,
        settings.second_neighbour_weight,
        floor=_lift_floor(fused, limit, settings, headroom) if sessions == 0 else None,
    )
    known: dict[int, MemoryRecord] = {}
    asked: set[int] = set()
    if reach.filt is not None and settings.entity_weight > 0 and settings.entity_seeds > 0:
        asked = set(lift)  # the entity links' seeds are chosen by each row's own lift
        known = store.records(list(lift), with_event=False)
        lift = _utterances_only(lift, known)
    linked: dict[int, float] = {}
    if reach.filt is not None:
        admit = None if reach.filtered else reach.filt
        fused, linked = linked_rows(store, scope_key, fused, lift, words.size, admit, settings)
    if sessions > 0:  # the sessions read every candidate's record, those found through an entity too
        rest = [r for r in fused.rowids.tolist() if r not in asked]
        asked.update(rest)
        known = known | (store.records(rest, with_event=False) if rest else {})
        lift = _utterances_only(lift, known)
    at, known, lift, raised = _exact_contenders(store, fused, (lift, linked), (known, asked), limit, headroom)
    contenders = fused.rows(at)
    # Sessions need every candidate's record; the contenders' records are among them.
    wanted = fused.rowids.tolist() if sessions > 0 else [f.rowid for f in contenders]
    records = {r: known[r] for r in wanted if r in known}
    total = sum(weights.values()) or 1.0
    shares = {name: weight / total for name, weight in weights.items()}
    features = _Features(settings, trust_weight, lift, linked, date, reach.when)
    hits = _with_features(contenders, records, features, shares)[:limit]
    _measure(store, scope_key, words, hits, reach.relevance)
    ranked_sessions = _sessions(fused, raised, records, sessions, date) if sessions > 0 else []
    return hits, ranked_sessions


def _measure(
    store: TenantStore, scope_key: str, words: QueryWords, hits: list[Hit], measured: Mapping[int, float]
) -> None:
    """Set each returned hit's relevance: as ``measured`` holds it, else read now (the memories'
    lexical evidence from what the store keeps of their indexed bodies, in one read)."""
    held = indexed_evidence(store, scope_key, words, (h.record for h in hits if h.record.rowid not in measured))
    for hit in hits:
        rowid = hit.record.rowid
        cosine = hit.arms.get("dense", {}).get("raw")
        hit.relevance = measured[rowid] if rowid in measured else relevance(cosine, words, hit.record, held.get(rowid))


def _sessions(
    fused: fusion.FusedRows,
    lift: dict[int, float],
    records: dict[int, MemoryRecord],
    limit: int,
    date: DateFeature | None,
) -> list[SessionHit]:
    """Rank the sessions of every candidate episode (both arms' pools, not only the top
    ``limit`` memories) by their best episode's score, so a session is found even when other
    sessions fill the memory list."""
    scored: list[tuple[float, int, str, MemoryRecord]] = []
    for rowid, fused_score in zip(fused.rowids.tolist(), fused.scores.tolist(), strict=True):
        record = records.get(rowid)
        if record is None or record.source != "EPISODE" or record.session_id is None:
            continue
        score = fused_score + lift.get(rowid, 0.0) + (date(record) if date else 0.0)
        scored.append((score, rowid, record.session_id, record))
    best: dict[str, SessionHit] = {}
    for score, _, session_id, record in sorted(scored, key=lambda s: (-s[0], s[1])):
        hit = best.get(session_id)
        if hit is None:  # rows come best first: the first one seen sets the session's score
            hit = best[session_id] = SessionHit(session_id, score, [])
        hit.records.append(record)
    return list(best.values())[:limit]


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


def _headroom(settings: RetrievalSettings, *, dated: bool, timed: bool = False) -> float:
    """The most the features can add to a row's score (each feature is at most 1; the date and
    time-words features count only when the query names a date or relative time)."""
    features = settings.recency_weight + settings.confidence_weight + settings.importance_weight + settings.trust_weight
    return features + (settings.date_weight if dated else 0.0) + (settings.time_words_weight if timed else 0.0)


def _lift_floor(fused: fusion.FusedRows, limit: int, settings: RetrievalSettings, headroom: float) -> float | None:
    """The fused score below which no lift and no feature can bring a row into the top ``limit``."""
    if len(fused) <= limit:
        return None
    reach = (settings.neighbour_weight + settings.second_neighbour_weight) * float(fused.scores[0])
    return float(fused.scores[limit - 1]) - reach - headroom


def _neighbour_lift(
    store: TenantStore,
    scope_key: str,
    fused: fusion.FusedRows,
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
    if (weight <= 0 and weight_2 <= 0) or not len(fused):
        return {}
    ids = fused.rowids  # every candidate lends
    order = np.argsort(ids)
    known, known_score = ids[order], fused.scores[order]

    def score_of(rowids: np.ndarray) -> np.ndarray:
        """The fused score of each rowid, 0 for -1 and for rows the arms did not find."""
        at = np.minimum(np.searchsorted(known, rowids), len(known) - 1)
        return np.where(known[at] == rowids, known_score[at], 0.0)

    # Only rows that can still rise into the top borrow (their neighbours are looked up).
    borrowers = ids if floor is None else ids[fused.scores >= floor]
    before, after = store.adjacent(scope_key, borrowers.tolist())
    lift = weight * np.maximum(score_of(before), score_of(after))
    if weight_2 > 0:  # one lookup: the turn before the one before, and after the one after
        beyond_before, beyond_after = store.adjacent(scope_key, np.concatenate([before, after]).tolist())
        far = np.maximum(score_of(beyond_before[: len(before)]), score_of(beyond_after[len(before) :]))
        lift += weight_2 * far
    lifted = np.flatnonzero(lift > 0)
    return dict(zip(borrowers[lifted].tolist(), lift[lifted].tolist(), strict=True))


def _utterances_only(lift: dict[int, float], records: dict[int, MemoryRecord]) -> dict[int, float]:
    """The lift without the episodes that hold a whole exchange (the user's words and the answer).

    The lift is for an utterance whose meaning is in the turns around it; an exchange carries its
    own answer, and its neighbours are other exchanges, so lifting them only crowds out matches
    (BEAM, whose episodes are exchanges, and LoCoMo, whose are utterances: bench/RESULTS.md).
    """
    return {r: v for r, v in lift.items() if r not in records or not holds_exchange(records[r].text)}


def _exact_contenders(
    store: TenantStore,
    fused: fusion.FusedRows,
    lent: tuple[dict[int, float], dict[int, float]],
    read: tuple[dict[int, MemoryRecord], set[int]],
    limit: int,
    headroom: float,
) -> tuple[np.ndarray, dict[int, MemoryRecord], dict[int, float], dict[int, float]]:
    """The contenders' positions once every contender's lift is its own, the records read (with
    those read before), the neighbours' lift, and it with the entity links' (each row's raise).
    ``lent``: the neighbours' lift and the entity links'; ``read``: the records read before, and every
    rowid asked for.

    An unread row's lift is an upper bound (an exchange's goes once its record is read), so rows
    chosen by it are a superset. The first read takes the contenders, as recall always did; where no
    exchange is among them (utterances) that is all. Otherwise the second takes every row whose bound
    reaches the ``limit``-th fused score less the features' headroom: no true score of the top is lower
    than that score, so no row outside can reach it, and the third choice finds every contender read.
    A row removed since the arms ran (asked for, no record) leaves the choice.
    """
    lift, linked = lent
    known, asked = read
    wide = False
    while True:
        gone = [r for r in asked if r not in known]
        rows = np.flatnonzero(~np.isin(fused.rowids, gone)) if gone else None
        live = fused if rows is None else fused.take(rows)
        raised = {r: lift.get(r, 0.0) + linked.get(r, 0.0) for r in lift.keys() | linked.keys()}
        at = _contenders(live, raised, limit, headroom)
        at = at if rows is None else rows[at]
        unread = [r for r in fused.rowids[at].tolist() if r not in asked]
        if not unread:
            return at, known, lift, raised
        if wide and len(live) > limit:
            kth = np.partition(live.scores, len(live) - limit)[len(live) - limit]
            bound = live.scores + np.array([raised.get(r, 0.0) for r in live.rowids.tolist()])
            unread = [r for r in live.rowids[bound >= kth - headroom].tolist() if r not in asked]
        asked.update(unread)
        known = known | store.records(unread, with_event=False)
        lift = _utterances_only(lift, known)
        wide = True


def _contenders(fused: fusion.FusedRows, lift: dict[int, float], limit: int, headroom: float) -> np.ndarray:
    """The positions of the rows that can still reach the top ``limit`` once features are added
    (each is at most 1), in the rows' order.

    A row whose score trails the ``limit``-th best by more than every feature weight together
    can never overtake it, so it is neither fetched nor scored: exact, and much less work.
    """
    if len(fused) <= limit:
        return np.arange(len(fused))
    base = fused.scores + np.array([lift.get(rowid, 0.0) for rowid in fused.rowids.tolist()])
    floor = np.partition(base, len(base) - limit)[len(base) - limit] - headroom
    return np.flatnonzero(base >= floor)


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
            name: {"rank": rank, "raw": raw, "contribution": part, "weight": shares[name]}
            for name, (rank, raw, part) in row.arms.items()
        }
        hits.append(Hit(record, row.score + sum(features.values()), arms, features))
    hits.sort(key=lambda h: (-h.score, h.record.rowid))
    return hits
