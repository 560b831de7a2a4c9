"""``engram bench assist``: what model-assisted memory costs EngramDB itself (engramdb_bench.assist_bench)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from engramdb_bench.cli.options import EmbedderOpt, OutOpt

_out = Console()
_err = Console(stderr=True, soft_wrap=True)


def assist(
    turns: Annotated[int, typer.Option(min=10, help="turns extracted through the queue")] = 300,
    seed_memories: Annotated[int, typer.Option(min=10, help="episodes in the scope before the run")] = 1000,
    seed_facts: Annotated[int, typer.Option(min=0, help="stated facts in the scope (judgement's neighbours)")] = 100,
    queries: Annotated[int, typer.Option(min=10, help="recall queries per phase")] = 200,
    model_ms: Annotated[float, typer.Option(min=0, help="the scripted model's answer time, ms")] = 50.0,
    workers: Annotated[int, typer.Option(min=1, help="the server's extraction threads (llm.workers)")] = 8,
    embedder: EmbedderOpt = "minilm",
    out: OutOpt = Path("bench/out/assist.json"),
) -> None:
    """Model-assisted memory's own cost: overhead per extracted turn, turns/s through the queue, recall
    latency with the queue idle and busy (a scripted model on loopback, the real server)."""
    from engramdb_bench.assist_bench import ModelBenchConfig, run

    config = ModelBenchConfig(
        turns=turns,
        seed_memories=seed_memories,
        seed_facts=seed_facts,
        queries=queries,
        model_ms=model_ms,
        workers=workers,
        embedder=embedder,
    )
    result = run(config, progress=lambda line: _err.print(line, highlight=False))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    _out.print(_assist_table(result))
    _out.print(f"JSON written to {out}", highlight=False)


def _assist_table(result: dict[str, Any]) -> Table:
    table = Table(
        "measure",
        "p50",
        "p95",
        "target",
        title=f"model-assisted memory ({result['machine']['cpusUsable']} "
        f"CPUs, scripted model {result['config']['model_ms']:g} ms)",
    )
    rows = [
        ("overhead per extracted turn (wall - model), ms", result["overheadMsPerTurn"], "p50 <= 20"),
        ("CPU per extracted turn (worker thread), ms", result["cpuMsPerTurn"], ""),
        ("job run per turn (model included), ms", result["jobRunMs"], ""),
        ("episode write with extract=true, ms", result["episodeWriteWithExtractMs"], ""),
        ("recall, workers paused (client), ms", result["recall"]["idle"]["clientMs"], ""),
        ("recall, workers running (client), ms", result["recall"]["whileExtracting"]["clientMs"], ""),
        ("recall, workers paused (server search), ms", result["recall"]["idle"]["serverSearchMs"], ""),
        ("recall, workers running (server search), ms", result["recall"]["whileExtracting"]["serverSearchMs"], ""),
    ]
    for name, stats, target in rows:
        table.add_row(name, f"{stats['p50']:.2f}", f"{stats['p95']:.2f}", target)
    throughput = result["throughput"]
    table.add_row(
        "worker process CPU per turn (mean, start-up included), ms",
        f"{result['workerProcessCpuMsPerTurn']:.1f}",
        "",
        "",
    )
    table.add_row("turns/s through the queue", f"{throughput['turnsPerSecond']:.1f}", "", ">= 20")
    return table
