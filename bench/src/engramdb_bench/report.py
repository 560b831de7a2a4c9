"""Tables of an evaluation result, as plain rows (for rich or Markdown) and as Markdown text.

Rows are grouped by question group, one row per arm, so the arms read side by side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

Table = tuple[list[str], list[list[str]]]  # headers, rows

# Published BM25 floors (../shared/bench/README.md) and the targets, by dataset.
TARGETS: dict[str, list[dict[str, Any]]] = {
    "locomo": [
        {"metric": "turnRecall@5", "floor": 0.434, "target": None},
        {"metric": "turnRecall@10", "floor": 0.511, "target": 0.70},
        {"metric": "sessionRecallAll@10", "floor": 0.847, "target": 0.93},
    ],
    "longmemeval": [
        {"metric": "sessionRecallAny@5", "floor": 0.888, "target": 0.97},
        {"metric": "sessionRecallAll@5", "floor": 0.742, "target": 0.90},
        {"metric": "sessionNdcg@10", "floor": 0.793, "target": None},
    ],
    "beam": [
        {"metric": "turnRecall@5", "floor": None, "target": None},
        {"metric": "turnRecall@10", "floor": None, "target": 0.80},
        {"metric": "updateAboveOriginal", "floor": None, "target": 0.90},
    ],
}
FLOOR_NOTES = {
    "locomo": "BM25 floors (rank_bm25, categories 1-4, n=1,536): turn documents for turn recall, "
    "session documents for session recall_all@10",
    "longmemeval": "BM25 floors on the full LongMemEval_S (418 scorable questions), session documents "
    "of user turns; the sample folder is a small subset, so compare with care",
    "beam": "no published floor: the bm25 and vector arms of the same run are the floors (issue 33: hybrid "
    "recall@10 >= 0.80 and >= 0.15 above the better of them, no ability below 0.5)",
}


def fmt(value: Any, digits: int = 3) -> str:
    """Return a metric as text: fixed digits, '-' for a missing or NaN value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def _ks(result: dict[str, Any]) -> list[int]:
    return list(result["config"]["ks"])


def _rows(result: dict[str, Any], keys: Sequence[str]) -> list[list[str]]:
    rows = []
    for group in result["groups"]:
        for arm, data in result["arms"].items():
            stats = data["groups"].get(group, {})
            rows.append([group, arm, fmt(stats.get("n")), *[fmt(stats.get(k)) for k in keys]])
    return rows


def turn_table(result: dict[str, Any]) -> Table:
    """Return turn-level evidence recall@k per group and arm (and, where measured, whether the newer
    of two statements ranks above the older)."""
    keys = [f"turnRecall@{k}" for k in _ks(result)]
    headers = ["group", "arm", "n", *[f"R@{k}" for k in _ks(result)]]
    if result["dataset"] == "beam":
        keys, headers = [*keys, "updateAboveOriginal"], [*headers, "newer above"]
    return headers, _rows(result, keys)


def session_table(result: dict[str, Any]) -> Table:
    """Return session-level recall_any@k, recall_all@k, nDCG@k, MRR and sessions found, per group and arm."""
    ks = _ks(result)
    keys = (
        [f"sessionRecallAny@{k}" for k in ks]
        + [f"sessionRecallAll@{k}" for k in ks]
        + [f"sessionNdcg@{k}" for k in ks]
        + ["sessionMrr", "sessionsRetrieved"]
    )
    headers = (
        ["group", "arm", "n"]
        + [f"any@{k}" for k in ks]
        + [f"all@{k}" for k in ks]
        + [f"nDCG@{k}" for k in ks]
        + ["MRR", "sessions"]
    )
    return headers, _rows(result, keys)


def timing_table(result: dict[str, Any]) -> Table:
    """Return recall latency per arm (wall time of MemoryService.recall, and its parts)."""
    rows = []
    for arm, data in result["arms"].items():
        lat = data["latencyMs"]
        keys = ("p50", "p95", "embedMsP50", "embedMsP95", "searchMsP50", "searchMsP95")
        rows.append([arm, *[fmt(lat.get(key), 1) for key in keys]])
    return ["arm", "recall p50 ms", "p95", "embed p50", "embed p95", "search p50", "search p95"], rows


def target_table(result: dict[str, Any]) -> Table:
    """Return the headline metrics of group 'all' per arm against the BM25 floors and the targets."""
    rows = []
    for spec in TARGETS.get(result["dataset"], []):
        metric = spec["metric"]
        values = [result["arms"][arm]["groups"].get("all", {}).get(metric) for arm in result["arms"]]
        best = result["arms"].get("hybrid", {}).get("groups", {}).get("all", {}).get(metric)
        target = spec["target"]
        verdict = "-" if target is None or best is None else ("met" if best >= target else "missed")
        rows.append([metric, *[fmt(v) for v in values], fmt(spec["floor"]), fmt(target), verdict])
    return ["metric (all)", *result["arms"], "BM25 floor", "target", "hybrid vs target"], rows


def summary_lines(result: dict[str, Any]) -> list[str]:
    """Return one-line facts: documents, counts, ingest time, run time, machine."""
    c, i, m = result["counts"], result["ingest"], result["machine"]
    skipped = ", ".join(f"{n} {why}" for why, n in c["questionsSkipped"].items()) or "none"
    groups = result.get("groups", {})
    lines = [
        f"documents ({result['config']['granularity']}): {result['protocol']['documents']}",
        f"{c['conversations']} conversations, {c['sessions']} sessions, {c['documents']} documents "
        f"({c['episodes']} episodes), {c['questionsAsked']} questions asked; skipped: {skipped}"
        + (f"; {c['questionsOverLimit']} left out by --limit-questions" if c["questionsOverLimit"] else ""),
        f"group 'all' = {', '.join(groups.get('all', []))}",
        f"ingest: write {i['writeSeconds']:.1f} s, embed {i['embedSeconds']:.1f} s "
        f"({i['episodesEmbedded']} episodes, {result['config']['embedderModel']}), "
        f"{i['episodesPerSecond']} episodes/s end to end; whole run {result['runSeconds']:.1f} s",
        f"session metrics: {result['protocol']['sessionRanking']}",
        f"machine: {m.get('cpusUsable')} CPUs ({m.get('cpuModel')}), Python {m.get('python')}, "
        f"engramdb {m.get('engramdb')} at {result.get('git')}, {result['date']}",
    ]
    return lines


def markdown_table(table: Table) -> str:
    """Return a table as GitHub Markdown."""
    headers, rows = table
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(result: dict[str, Any]) -> str:
    """Return every table of a result as Markdown, with the summary lines."""
    parts = [
        "Against the BM25 floors and the targets:",
        markdown_table(target_table(result)),
        f"({FLOOR_NOTES.get(result['dataset'], '')})",
        "Turn-level evidence recall@k (fraction of a question's evidence turns in the first k documents):",
        markdown_table(turn_table(result)),
        "Session level (the server's session ranking: recall with sessions = max k):",
        markdown_table(session_table(result)),
        "Recall latency (ms, wall time of `MemoryService.recall`; embed = query embedding):",
        markdown_table(timing_table(result)),
        "\n".join(f"- {line}" for line in summary_lines(result)),
    ]
    return "\n\n".join(parts) + "\n"
