"""Rows that borrow from their neighbours, rows that can still reach the top, and the session ranking.

Recall's steps between fusion and the features: a turn next to a strong match is likelier
evidence than its own words say (the neighbour lift); a row whose score trails the ``limit``-th
best by more than every feature together can never reach the top (the contenders); sessions rank
by their best episode among every candidate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engramdb.config import RetrievalSettings
from engramdb.core import fusion
from engramdb.storage.port import MemoryRecord, TenantStore

DateFeature = Callable[[MemoryRecord], float]


@dataclass
class SessionHit:
    """A session ranked by its best-matching episode, with its matching rows best first."""

    session_id: str
    score: float
    records: list[MemoryRecord]


def rank_sessions(
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


def lift_floor(fused: list[fusion.Fused], limit: int, settings: RetrievalSettings, headroom: float) -> float | None:
    """The fused score below which no lift and no feature can bring a row into the top ``limit``."""
    if len(fused) <= limit:
        return None
    reach = (settings.neighbour_weight + settings.second_neighbour_weight) * fused[0].score
    return fused[limit - 1].score - reach - headroom


def neighbour_lift(
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


def contenders(fused: list[fusion.Fused], lift: dict[int, float], limit: int, headroom: float) -> list[fusion.Fused]:
    """Rows that can still reach the top ``limit`` once features are added (each is at most 1).

    A row whose score trails the ``limit``-th best by more than every feature weight together
    can never overtake it, so it is neither fetched nor scored: exact, and much less work.
    """
    if len(fused) <= limit:
        return fused
    base = sorted((f.score + lift.get(f.rowid, 0.0) for f in fused), reverse=True)
    floor = base[limit - 1] - headroom
    return [f for f in fused if f.score + lift.get(f.rowid, 0.0) >= floor]
