"""Scoring ``engram bench versus``: the same questions, the same evidence, every system alike."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from engramdb_bench import metrics
from engramdb_bench.datasets import LOCOMO_SCORED

KS = (5, 10)


class MismatchError(ValueError):
    """Two systems did not see the same turns, questions or evidence: their numbers do not compare."""


def check_same_inputs(seen: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Return what every system saw, after checking they all saw the same: the turns stored per
    conversation, each question's conversation and evidence, and an answer to every question."""
    names = list(seen)
    reference = seen[names[0]]
    for name in names[1:]:
        for part in ("stored", "questions"):
            if seen[name][part] != reference[part]:
                raise MismatchError(f"{name} and {names[0]} differ in {part}")
    for name, view in seen.items():
        for setting, answers in view["answers"].items():
            if set(answers) != set(reference["questions"]):
                raise MismatchError(f"{name} ({setting}) answered other questions than were asked")
    return {
        "systems": names,
        "conversations": len(reference["stored"]),
        "turns": sum(len(v) for v in reference["stored"].values()),
        "questions": len(reference["questions"]),
        "sameInputs": True,
    }


def recall_at(
    answers: Mapping[str, Mapping[str, Any]], questions: Mapping[str, Any], categories: Mapping[str, str]
) -> dict[str, dict[str, float]]:
    """Return evidence recall@5 and @10 for ``all`` and per category (LoCoMo's in its order, others
    sorted), with n: the share of a question's evidence turns among the first k retrieved, averaged."""
    per: dict[str, list[dict[str, float]]] = defaultdict(list)
    for qid, (_, evidence) in questions.items():
        turns = answers[qid]["turns"]
        scores = {f"recall@{k}": len(set(evidence) & set(turns[:k])) / len(evidence) for k in KS}
        per[categories[qid]].append(scores)
        per["all"].append(scores)
    order = ["all", *[c for c in LOCOMO_SCORED if c in per], *sorted(set(per) - {"all", *LOCOMO_SCORED})]
    return {group: {"n": len(per[group]), **_means(per[group])} for group in order}


def update_above(
    answers: Mapping[str, Mapping[str, Any]], orders: Mapping[str, tuple[list[str], list[str]]]
) -> dict[str, float] | None:
    """Return how often the newer statement ranks above the older it replaced (BEAM's knowledge
    updates and contradictions: question id -> (older, newer) turns), with n; None without such
    questions."""
    if not orders:
        return None
    scores = [
        metrics.newer_above([[t] for t in answers[q]["turns"]], newer, older) for q, (older, newer) in orders.items()
    ]
    return {"n": len(scores), "share": round(float(np.mean(scores)), 4)}


def _means(scores: list[dict[str, float]]) -> dict[str, float]:
    return {f"recall@{k}": round(float(np.mean([s[f"recall@{k}"] for s in scores])), 4) for k in KS}


def latency(answers: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    """Return the client-side recall time per question: p50, p95, p99, mean and max, in ms."""
    ms = np.array([a["ms"] for a in answers.values()], dtype=np.float64)
    stats = {f"p{p}": round(float(np.percentile(ms, p)), 3) for p in (50, 95, 99)}
    return {**stats, "mean": round(float(ms.mean()), 3), "max": round(float(ms.max()), 3), "n": int(ms.size)}


def server_parts(answers: Mapping[str, Mapping[str, Any]]) -> dict[str, float] | None:
    """Where EngramDB's recall time went, p50 of each part in ms: embedding the query and searching
    (the server's own ``timings``), and the rest of the client's time (HTTP, key, validation, the
    answer's assembly and encoding); None for a system whose answers carry no server timings."""
    timed = [a for a in answers.values() if a.get("server")]
    if not timed or len(timed) != len(answers):
        return None
    embed = np.array([a["server"]["embedMs"] for a in timed], dtype=np.float64)
    search = np.array([a["server"]["searchMs"] for a in timed], dtype=np.float64)
    rest = np.array([a["ms"] for a in timed], dtype=np.float64) - embed - search
    return {
        name: round(float(np.median(part)), 3) for name, part in (("embed", embed), ("search", search), ("rest", rest))
    }


def ratios(systems: Mapping[str, Any], arms: Mapping[str, Any]) -> dict[str, Any]:
    """Every figure as a ratio to a reference measured in the same run: EngramDB's recall latency to
    the reference arm's (per mode), Mem0's to EngramDB's, ingest to the embedder's own throughput."""
    out: dict[str, Any] = {}
    for label, figures in systems.items():
        if not label.startswith("reference ("):
            continue
        mode = label.removeprefix("reference ")
        ours = systems.get(f"engramdb {mode}")
        if ours is not None:
            out[f"engramdb / reference {mode}"] = _divide(ours["latencyMs"], figures["latencyMs"])
    engram = next((f for name, f in systems.items() if name.startswith("engramdb")), None)
    for label, figures in systems.items():
        if label.startswith("mem0") and engram is not None:
            out[f"{label} / engramdb"] = _divide(figures["latencyMs"], engram["latencyMs"])
    ceiling = arms.get("embedder", {}).get("ingest", {}).get("turnsPerSecond")
    if ceiling and "engramdb" in arms:
        out["engramdb ingest / embedder batches"] = round(arms["engramdb"]["ingest"]["turnsPerSecond"] / ceiling, 3)
    if "mem0" in arms and "engramdb" in arms:
        mem0 = arms["mem0"]["ingest"]["turnsPerSecond"]
        out["engramdb ingest / mem0 ingest"] = round(arms["engramdb"]["ingest"]["turnsPerSecond"] / mem0, 3)
    return out


def _divide(ours: Mapping[str, float], theirs: Mapping[str, float]) -> dict[str, float]:
    return {p: round(ours[p] / theirs[p], 3) for p in ("p50", "p95", "p99") if theirs.get(p)}
