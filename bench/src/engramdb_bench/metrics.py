"""Retrieval metrics as pure functions over ranked lists (best first) and gold sets.

Binary relevance throughout. ``k`` counts distinct items of the list it is given: the caller
deduplicates (documents by id, sessions by their best-ranked document) before scoring.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_DIA_ID = re.compile(r"D:?0*(\d+):0*(\d+)")


def parse_evidence(values: Iterable[str]) -> list[str]:
    """Return the evidence ids packed in ``values``, in order, without repeats.

    Each string is split on ``;``, ``,`` and spaces; ids of the LoCoMo form are normalised
    (``D30:05`` -> ``D30:5``, ``D:11:26`` -> ``D11:26``); anything else is returned as is.
    """
    ids: list[str] = []
    for value in values:
        for part in _EVIDENCE_SPLIT.split(str(value)):
            if part:
                match = _DIA_ID.fullmatch(part)
                ids.append(f"D{match[1]}:{match[2]}" if match else part)
    return list(dict.fromkeys(ids))


def first_occurrences(items: Iterable[T]) -> list[T]:
    """Return ``items`` without repeats, each kept at its first (best) position."""
    return list(dict.fromkeys(items))


def evidence_recall(ranked: Sequence[Iterable[str]], gold: Iterable[str], k: int) -> float:
    """Return the fraction of ``gold`` ids found in the first ``k`` ranked documents.

    Each ranked document is the set of turn ids it covers (one for a turn document).
    """
    wanted = set(gold)
    if not wanted:
        raise ValueError("evidence_recall needs at least one gold id")
    found: set[str] = set()
    for doc in ranked[:k]:
        found.update(doc)
    return len(found & wanted) / len(wanted)


def newer_above(ranked: Sequence[Iterable[str]], newer: Iterable[str], older: Iterable[str]) -> float:
    """Return 1.0 if the first document holding a ``newer`` id ranks above the first holding an
    ``older`` one (a statement found ranks above one not found; neither found: 0.0)."""
    new, old = set(newer), set(older)
    for doc in ranked:
        ids = set(doc)
        if ids & new:
            return 0.0 if ids & old else 1.0  # one document holding both orders nothing
        if ids & old:
            return 0.0
    return 0.0


def recall_any(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Return 1.0 if any gold item is in the first ``k``, else 0.0."""
    wanted = set(gold)
    return float(any(item in wanted for item in ranked[:k]))


def recall_all(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Return 1.0 if every gold item is in the first ``k``, else 0.0 (LongMemEval's "Recall@k")."""
    wanted = set(gold)
    if not wanted:
        raise ValueError("recall_all needs at least one gold item")
    return float(wanted <= set(ranked[:k]))


def ndcg(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Return binary nDCG@k: DCG of the first ``k`` over the DCG of all gold items ranked first."""
    wanted = set(gold)
    if not wanted:
        raise ValueError("ndcg needs at least one gold item")
    dcg = sum(1.0 / math.log2(rank + 1) for rank, item in enumerate(ranked[:k], 1) if item in wanted)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(wanted)) + 1))
    return dcg / ideal


def reciprocal_rank(ranked: Sequence[str], gold: Iterable[str]) -> float:
    """Return 1/rank of the first gold item in ``ranked`` (0.0 if none is there)."""
    wanted = set(gold)
    for rank, item in enumerate(ranked, 1):
        if item in wanted:
            return 1.0 / rank
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Return the ``q``-th percentile (0-100) with linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def mean(values: Sequence[float]) -> float:
    """Return the arithmetic mean; NaN for no values."""
    return sum(values) / len(values) if values else math.nan
