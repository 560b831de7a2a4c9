"""The side-by-side table of ``engram bench versus``, and what is unfair in each direction."""

from __future__ import annotations

from typing import Any

from rich.table import Table

UNFAIR = [
    "Keyword arm (against Mem0): EngramDB fuses BM25 with the vector arm. Mem0 2.2.1's own BM25 arm needs "
    "fastembed's Qdrant/bm25 model from the Hugging Face hub and spaCy for lemmas and entity boosts; offline "
    "neither loads ('Could not load model Qdrant/bm25 from any source'), so Mem0 ranks by its vectors alone.",
    "Dates and sessions (against Mem0): EngramDB stores each turn's session date and its place in the session, "
    "and its date feature and neighbour lift use them; Mem0 OSS takes no timestamp (a Platform feature) and "
    "keeps no session order.",
    "int8 vs fp32 (both ways): EngramDB embeds with all-MiniLM-L6-v2 quantised to int8 on onnxruntime (minilm: "
    "int8 weights, cosines within 0.002 of fp32; minilm-fast, a new folder's default on an x86 CPU with AVX2 "
    "or VNNI: int8 activations too, cosines >= 0.988 to minilm's), Mem0 with the fp32 weights on PyTorch: "
    "slightly against EngramDB in quality, for it in speed.",
    "Batching (for EngramDB on ingest): EngramDB takes 100 turns a request and embeds in background batches; "
    "Mem0's add() with infer=False embeds each message alone, and its API has no batch path for raw messages.",
    "Qdrant's local mode (against Mem0 on latency, for it on memory): Mem0's default vector store runs in "
    "process and scores every point of the collection, filtering by user in Python; a Qdrant server would "
    "search faster, but is another process with its own memory.",
    "HTTP (against EngramDB on latency): EngramDB's times are an HTTP round trip through the SDK, JSON both "
    "ways; Mem0 is called in process.",
    "The reference arm (the floor, not a peer): one route, the same embedder (unless --reference-embedder names "
    "another: the table's title says), an exact top-k by its vectors "
    "alone; no key, no lexical arm, no fusion, features, lifecycle or audit. It is asked interleaved with "
    "EngramDB, question by question, through the same client (plain httpx): the ratio is what EngramDB's "
    "work beyond embedding and a dot product costs.",
    "Memory (for EngramDB): EngramDB's peak RSS is the server process alone (the client is another process); "
    "Mem0's is the whole process, which is the caller's.",
    "Threads (for Mem0): Mem0 is also timed with one torch/BLAS thread, its faster setting on two cores; "
    "EngramDB runs its defaults (onnxruntime 2 threads for minilm, 1 for minilm-fast; 1 BLAS thread).",
]


def table(result: dict[str, Any]) -> Table:
    """The side-by-side table: quality, ingest, latency, memory and disk per system."""
    systems = result["systems"]
    names = list(systems)
    corpus = result["corpus"]
    config = result["config"]
    model = "the same all-MiniLM-L6-v2" if config["embedder"] == "minilm" else config["embedder"]
    if config.get("reference_embedder") not in (None, config["embedder"]):
        model = f"EngramDB on {config['embedder']}, the reference on {config['reference_embedder']}"
    asked = (
        "(categories 1-4)" if corpus.get("dataset", "locomo") == "locomo" else f"(tier {config['tier']}, no abstention)"
    )
    table = Table(
        "",
        *names,
        title=f"{_DATASET_NAMES[corpus.get('dataset', 'locomo')]}: {corpus['conversations']} conversations, "
        f"{corpus['turns']:,} turns, {corpus['questions']:,} questions {asked}, {model}",
    )
    groups = list(systems[names[0]]["recall"])
    for k in (10, 5):
        for group in groups:
            n = systems[names[0]]["recall"][group]["n"]
            table.add_row(
                f"evidence recall@{k}, {group} (n={n})",
                *[f"{systems[s]['recall'][group][f'recall@{k}']:.3f}" for s in names],
            )
    if any(systems[s].get("updateAboveOriginal") for s in names):
        table.add_row(
            f"newer above the original (n={systems[names[0]]['updateAboveOriginal']['n']})",
            *[f"{systems[s]['updateAboveOriginal']['share']:.3f}" for s in names],
        )
    table.add_row("ingest, turns/s until searchable", *[f"{systems[s]['ingest']['turnsPerSecond']:.1f}" for s in names])
    for p in ("p50", "p95", "p99"):
        table.add_row(f"recall {p}, ms (client)", *[f"{systems[s]['latencyMs'][p]:.2f}" for s in names])
    table.add_row(
        "recall p50 parts, ms: embed / search / rest", *[_parts(systems[s].get("serverP50Ms")) for s in names]
    )
    table.add_row("peak RSS, MB", *[_number(systems[s]["peakRssMB"]) for s in names])
    table.add_row("disk, MB", *[_number(systems[s]["diskMB"]) for s in names])
    return table


_DATASET_NAMES = {"locomo": "LoCoMo", "beam": "BEAM"}


def _parts(parts: dict[str, float] | None) -> str:
    """The server's p50 embedding and search and the rest of the client's time, or "-"."""
    return "-" if not parts else f"{parts['embed']:.2f} / {parts['search']:.2f} / {parts['rest']:.2f}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def summary(result: dict[str, Any]) -> list[str]:
    """Lines under the table: the p50 ratio, the checks, the load in each phase."""
    systems = result["systems"]
    lines = [f"same turns, questions and evidence ids in every system: {result['checks']['sameInputs']}"]
    mem0 = [s for s in systems if s.startswith("mem0")]
    engram = next((s for s in systems if s.startswith("engramdb")), None)
    if engram is not None and mem0:
        best = min(mem0, key=lambda s: systems[s]["latencyMs"]["p50"])
        ratio = systems[best]["latencyMs"]["p50"] / systems[engram]["latencyMs"]["p50"]
        lines.append(f"recall p50: {engram} {ratio:.1f}x faster than Mem0's best setting ({best})")
    for name, figures in result.get("ratios", {}).items():
        shown = ", ".join(f"{k} {v:.2f}x" for k, v in figures.items()) if isinstance(figures, dict) else f"{figures}x"
        lines.append(f"{name}: {shown}")
    for load in result["loads"]:
        lines.append(
            f"load during {load['phase']} ({load['seconds']:.0f} s): 1-min load {load['load1Min']:.2f}-"
            f"{load['load1Max']:.2f} (mean {load['load1Mean']:.2f}), CPU busy {load['cpuBusyPercent']}%"
        )
    return lines
