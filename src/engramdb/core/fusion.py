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


ArmEntry = tuple[int, float, float]  # an arm's 1-based rank, raw score and contribution for a row


@dataclass(slots=True)
class Fused:
    """A fused row: its score and, per arm, its 1-based rank, raw score and contribution (one
    small dict per row: a recall fuses a few hundred rows, and only the top few are explained)."""

    rowid: int
    score: float
    arms: dict[str, ArmEntry] = field(default_factory=dict)

    @property
    def ranks(self) -> dict[str, int]:
        return {name: entry[0] for name, entry in self.arms.items()}

    @property
    def raw(self) -> dict[str, float]:
        return {name: entry[1] for name, entry in self.arms.items()}

    @property
    def parts(self) -> dict[str, float]:
        return {name: entry[2] for name, entry in self.arms.items()}


def rrf(arms: Mapping[str, Ranked], weights: Mapping[str, float], k: int = 60) -> list[Fused]:
    """Return weighted reciprocal-rank fusion, normalised so a row ranked first by every arm scores 1."""
    best = sum(weights.get(name, 0.0) for name in arms) / (k + 1)
    table = _Table()
    for name, ranked in arms.items():
        weight = weights.get(name, 0.0)
        table.add(name, ranked, [weight / (k + rank) / best if best > 0 else 0.0 for rank in range(1, len(ranked) + 1)])
    return table.ordered()


def weighted(arms: Mapping[str, Ranked], weights: Mapping[str, float]) -> list[Fused]:
    """Return the weighted sum of per-arm min-max normalised scores (absent from an arm: 0)."""
    total = sum(weights.get(name, 0.0) for name in arms) or 1.0
    table = _Table()
    for name, ranked in arms.items():
        weight = weights.get(name, 0.0) / total
        scores = [raw for _, raw in ranked]
        low, high = (min(scores), max(scores)) if scores else (0.0, 0.0)
        span = high - low
        table.add(name, ranked, [weight * ((raw - low) / span if span > 0 else 1.0) for raw in scores])
    return table.ordered()


class _Table:
    """The fused rows as they are credited, arm by arm: a row's score is its parts summed in the
    order the arms came (so a row's score never depends on anything but its own parts)."""

    __slots__ = ("entries", "scores")

    def __init__(self) -> None:
        self.entries: dict[int, dict[str, ArmEntry]] = {}
        self.scores: dict[int, float] = {}

    def add(self, arm: str, ranked: Ranked, parts: Sequence[float]) -> None:
        entries, scores = self.entries, self.scores
        for rank, ((rowid, raw), part) in enumerate(zip(ranked, parts, strict=True), start=1):
            entry = entries.get(rowid)
            if entry is None:
                entries[rowid] = {arm: (rank, raw, part)}
                scores[rowid] = part
            else:
                entry[arm] = (rank, raw, part)
                scores[rowid] += part

    def ordered(self) -> list[Fused]:
        scores, entries = self.scores, self.entries
        return [Fused(rowid, scores[rowid], entries[rowid]) for rowid in sorted(scores, key=lambda r: (-scores[r], r))]
