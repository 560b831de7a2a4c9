"""Rank fusion as pure functions over ranked lists of ``(id, score)``.

Both methods return scores in [0, 1] so the lifecycle features added afterwards have a stable
scale: reciprocal-rank fusion divided by its best possible value, or a weighted sum of
per-arm min-max normalised scores. Ties break on the id, so the result never depends on the
order the arms were given in. The fused rows are arrays (``FusedRows``): a recall fuses a few
hundred rows and only the few that can reach the top become ``Fused`` objects.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

Ranked = Sequence[tuple[int, float]]  # (row id, raw score), best first


ArmEntry = tuple[int, float, float]  # an arm's 1-based rank, raw score and contribution for a row


@dataclass(slots=True)
class Fused:
    """A fused row: its score and, per arm, its 1-based rank, raw score and contribution."""

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


@dataclass(frozen=True, slots=True)
class _ArmColumns:
    """One arm's columns, aligned with the fused rows: 1-based rank (0: the arm did not find
    the row), raw score and contribution."""

    rank: np.ndarray
    raw: np.ndarray
    part: np.ndarray


class FusedRows:
    """The fused rows as columns, best first (ties: the smaller id) until rows found some other
    way are appended (``with_rows``, at score 0). Indexing or iterating gives ``Fused`` rows."""

    __slots__ = ("_arms", "rowids", "scores")

    def __init__(self, rowids: np.ndarray, scores: np.ndarray, arms: dict[str, _ArmColumns]) -> None:
        self.rowids = rowids
        self.scores = scores
        self._arms = arms

    @classmethod
    def of(cls, rows: Sequence[Fused]) -> FusedRows:
        """Rows given one by one (tests, and rows found some other way), kept in their order."""
        names = sorted({name for row in rows for name in row.arms})
        arms = {}
        for name in names:
            entries = [row.arms.get(name, (0, 0.0, 0.0)) for row in rows]
            arms[name] = _ArmColumns(
                np.array([e[0] for e in entries], dtype=np.int64),
                np.array([e[1] for e in entries], dtype=np.float64),
                np.array([e[2] for e in entries], dtype=np.float64),
            )
        rowids = np.array([row.rowid for row in rows], dtype=np.int64)
        return cls(rowids, np.array([row.score for row in rows], dtype=np.float64), arms)

    def __len__(self) -> int:
        return len(self.rowids)

    def __getitem__(self, index: int) -> Fused:
        return self.rows([index])[0]

    def __iter__(self) -> Iterator[Fused]:
        return iter(self.rows(range(len(self))))

    def raw_of(self, arm: str) -> list[float | None]:
        """Each row's raw score in ``arm`` (None where the arm did not find it)."""
        columns = self._arms.get(arm)
        if columns is None:
            return [None] * len(self)
        found = (columns.rank > 0).tolist()
        return [raw if hit else None for raw, hit in zip(columns.raw.tolist(), found, strict=True)]

    def rows(self, indices: Sequence[int] | np.ndarray) -> list[Fused]:
        """The rows at ``indices`` as ``Fused`` objects, in that order."""
        at = np.asarray(indices, dtype=np.int64)
        columns = [
            (name, c.rank[at].tolist(), c.raw[at].tolist(), c.part[at].tolist()) for name, c in self._arms.items()
        ]
        out = []
        for i, (rowid, score) in enumerate(zip(self.rowids[at].tolist(), self.scores[at].tolist(), strict=True)):
            arms = {name: (rank[i], raw[i], part[i]) for name, rank, raw, part in columns if rank[i] > 0}
            out.append(Fused(rowid, score, arms))
        return out

    def take(self, keep: np.ndarray) -> FusedRows:
        """The rows where ``keep`` (a mask or indices) selects, in their order."""
        arms = {name: _ArmColumns(c.rank[keep], c.raw[keep], c.part[keep]) for name, c in self._arms.items()}
        return FusedRows(self.rowids[keep], self.scores[keep], arms)

    def with_rows(self, rowids: Sequence[int]) -> FusedRows:
        """These rows added at the end with score 0 and no arm."""
        if not len(rowids):
            return self
        n = len(rowids)
        arms = {
            name: _ArmColumns(
                np.concatenate([c.rank, np.zeros(n, dtype=np.int64)]),
                np.concatenate([c.raw, np.zeros(n)]),
                np.concatenate([c.part, np.zeros(n)]),
            )
            for name, c in self._arms.items()
        }
        added = np.asarray(rowids, dtype=np.int64)
        return FusedRows(np.concatenate([self.rowids, added]), np.concatenate([self.scores, np.zeros(n)]), arms)


def rrf(arms: Mapping[str, Ranked], weights: Mapping[str, float], k: int = 60) -> FusedRows:
    """Return weighted reciprocal-rank fusion, normalised so a row ranked first by every arm scores 1."""
    best = sum(weights.get(name, 0.0) for name in arms) / (k + 1)
    columns = []
    for name, ranked in arms.items():
        ids, raw = _columns(ranked)
        ranks = np.arange(1, len(ids) + 1, dtype=np.float64)
        parts = weights.get(name, 0.0) / (k + ranks) / best if best > 0 else np.zeros(len(ids))
        columns.append((name, ids, raw, parts))
    return _fused(columns)


def weighted(arms: Mapping[str, Ranked], weights: Mapping[str, float]) -> FusedRows:
    """Return the weighted sum of per-arm min-max normalised scores (absent from an arm: 0)."""
    total = sum(weights.get(name, 0.0) for name in arms) or 1.0
    columns = []
    for name, ranked in arms.items():
        ids, raw = _columns(ranked)
        weight = weights.get(name, 0.0) / total
        low, high = (float(raw.min()), float(raw.max())) if len(raw) else (0.0, 0.0)
        span = high - low
        parts = weight * ((raw - low) / span) if span > 0 else np.full(len(raw), weight * 1.0)
        columns.append((name, ids, raw, parts))
    return _fused(columns)


def _columns(ranked: Ranked) -> tuple[np.ndarray, np.ndarray]:
    ids = np.fromiter((rowid for rowid, _ in ranked), dtype=np.int64, count=len(ranked))
    raw = np.fromiter((score for _, score in ranked), dtype=np.float64, count=len(ranked))
    return ids, raw


def _fused(columns: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]) -> FusedRows:
    """The arms' rows in one table: a row's score is its parts summed in the order the arms came
    (so a row's score never depends on anything but its own parts), best first, ties by id."""
    everyone = np.unique(np.concatenate([ids for _, ids, _, _ in columns])) if columns else np.zeros(0, np.int64)
    scores = np.zeros(len(everyone))
    arms = {}
    for name, ids, raw, parts in columns:
        at = np.searchsorted(everyone, ids)
        rank = np.zeros(len(everyone), dtype=np.int64)
        rank[at] = np.arange(1, len(ids) + 1)
        arm_raw, arm_part = np.zeros(len(everyone)), np.zeros(len(everyone))
        arm_raw[at], arm_part[at] = raw, parts
        scores[at] += parts  # ids within an arm are distinct: no row is credited twice by one arm
        arms[name] = _ArmColumns(rank, arm_raw, arm_part)
    order = np.lexsort((everyone, -scores))
    return FusedRows(
        everyone[order],
        scores[order],
        {n: _ArmColumns(c.rank[order], c.raw[order], c.part[order]) for n, c in arms.items()},
    )
