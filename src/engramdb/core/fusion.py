"""Rank fusion as pure functions over ranked lists of ``(id, score)``.

Both methods return scores in [0, 1] so the lifecycle features added afterwards have a stable
scale: reciprocal-rank fusion divided by its best possible value, or a weighted sum of
per-arm min-max normalised scores. Ties break on the id, so the result never depends on the
order the arms were given in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

Ranked = Sequence[tuple[int, float]]  # (row id, raw score), best first


@dataclass(slots=True)
class Fused:
    """A fused row: its score and, per arm, its 1-based rank and raw score."""

    rowid: int
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)
    parts: dict[str, float] = field(default_factory=dict)  # each arm's contribution


def rrf(arms: Mapping[str, Ranked], weights: Mapping[str, float], k: int = 60) -> list[Fused]:
    """Return weighted reciprocal-rank fusion, normalised so a row ranked first by every arm scores 1."""
    best = sum(weights.get(name, 0.0) for name in arms) / (k + 1)
    fused: dict[int, Fused] = {}
    for name, ranked in arms.items():
        weight = weights.get(name, 0.0)
        for rank, (rowid, raw) in enumerate(ranked, start=1):
            part = weight / (k + rank) / best if best > 0 else 0.0
            _add(fused, name, rowid, rank, raw, part)
    return _ordered(fused)


def weighted(arms: Mapping[str, Ranked], weights: Mapping[str, float]) -> list[Fused]:
    """Return the weighted sum of per-arm min-max normalised scores (absent from an arm: 0)."""
    total = sum(weights.get(name, 0.0) for name in arms) or 1.0
    fused: dict[int, Fused] = {}
    for name, ranked in arms.items():
        weight = weights.get(name, 0.0) / total
        scores = [raw for _, raw in ranked]
        low, high = (min(scores), max(scores)) if scores else (0.0, 0.0)
        for rank, (rowid, raw) in enumerate(ranked, start=1):
            normalised = (raw - low) / (high - low) if high > low else 1.0
            _add(fused, name, rowid, rank, raw, weight * normalised)
    return _ordered(fused)


def _add(fused: dict[int, Fused], arm: str, rowid: int, rank: int, raw: float, part: float) -> None:
    """Credit ``rowid`` with ``arm``'s rank, raw score and part. A recall fuses a few hundred
    rows per arm: a row first met is built whole rather than through ``setdefault``, which
    would build (and mostly discard) a row with three empty dicts for every candidate."""
    row = fused.get(rowid)
    if row is None:
        fused[rowid] = Fused(rowid, part, {arm: rank}, {arm: raw}, {arm: part})
        return
    row.ranks[arm], row.raw[arm], row.parts[arm] = rank, raw, part
    row.score += part


def _ordered(fused: dict[int, Fused]) -> list[Fused]:
    return sorted(fused.values(), key=lambda f: (-f.score, f.rowid))
