"""Scoring one question's ranking, and summarising the scores by question group and arm.

Documents are scored at turn level (evidence recall@k), sessions through the server's own
session ranking (recall any/all@k, nDCG@k, MRR); :func:`summarise` averages them per group.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from engramdb_bench import metrics
from engramdb_bench.datasets import Dataset, Question
from engramdb_bench.documents import Document

ALL = "all"


def score(q: Question, ranked: Sequence[Document], sessions: Sequence[str], ks: Iterable[int]) -> dict[str, float]:
    """Return the question's metrics for documents and sessions ranked best first."""
    turns = [doc.turn_ids for doc in ranked]
    out: dict[str, float] = {}
    for k in ks:
        out[f"turnRecall@{k}"] = metrics.evidence_recall(turns, q.evidence_turns, k)
    for k in ks:
        out[f"sessionRecallAny@{k}"] = metrics.recall_any(sessions, q.evidence_sessions, k)
    for k in ks:
        out[f"sessionRecallAll@{k}"] = metrics.recall_all(sessions, q.evidence_sessions, k)
    for k in ks:
        out[f"sessionNdcg@{k}"] = metrics.ndcg(sessions, q.evidence_sessions, k)
    out["sessionMrr"] = metrics.reciprocal_rank(sessions, q.evidence_sessions)
    out["sessionsRetrieved"] = float(len(sessions))
    if q.older and q.newer:
        out["updateAboveOriginal"] = metrics.newer_above(turns, q.newer, q.older)
    return out


def group_order(dataset: Dataset, categories: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Return (group name, member categories) in report order: all, each category, then apart.

    ``all`` holds the dataset's headline categories (LoCoMo: 1-4) or every category.
    """
    seen = sorted(set(categories))
    if dataset.headline is None:
        head, apart = seen, []
    else:
        head = [c for c in dataset.headline if c in seen]
        head += [c for c in seen if c not in dataset.headline and c not in dataset.apart]
        apart = [c for c in dataset.apart if c in seen]
    groups = [(ALL, head)] if head else []
    return groups + [(c, [c]) for c in head + apart]


def summarise(questions: Sequence[dict[str, Any]], arms: Sequence[str], dataset: Dataset) -> dict[str, Any]:
    """Return, per arm, the mean of every metric per group and the recall latency percentiles."""
    out: dict[str, Any] = {}
    groups = group_order(dataset, (q["category"] for q in questions))
    for arm in arms:
        per_group: dict[str, Any] = {}
        for name, members in groups:
            rows = [q["arms"][arm]["metrics"] for q in questions if q["category"] in members]
            keys = dict.fromkeys(k for r in rows for k in r)  # a metric some questions lack: over those that have it
            per_group[name] = {"n": len(rows), **{k: metrics.mean([r[k] for r in rows if k in r]) for k in keys}}
            if "updateAboveOriginal" in keys:
                per_group[name]["nUpdateAboveOriginal"] = sum("updateAboveOriginal" in r for r in rows)
        walls = [q["arms"][arm]["ms"] for q in questions]
        latency = {"p50": metrics.percentile(walls, 50), "p95": metrics.percentile(walls, 95)}
        for part in ("embedMs", "searchMs"):
            values = [q["arms"][arm]["timings"][part] for q in questions if part in q["arms"][arm]["timings"]]
            if values:
                latency[f"{part}P50"] = metrics.percentile(values, 50)
                latency[f"{part}P95"] = metrics.percentile(values, 95)
        out[arm] = {"groups": per_group, "latencyMs": latency}
    return out
