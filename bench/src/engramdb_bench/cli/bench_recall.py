"""``engram bench recall``: server-side recall latency of one scope at several sizes, plus ingest rate
(engramdb_bench.latency)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from engramdb.errors import EngramError
from engramdb_bench.cli.options import EmbedderOpt, OutOpt, SeedOpt

_out = Console()
_err = Console(stderr=True, soft_wrap=True)


def _sizes(value: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in value.split(",") if part.strip()]
    except ValueError as error:
        raise typer.BadParameter("a comma-separated list of integers, e.g. 1000,10000") from error
    if not sizes or min(sizes) < 1:
        raise typer.BadParameter("sizes must be positive")
    return sizes


SizesOpt = Annotated[str, typer.Option("--sizes", help="memories in ONE scope, comma-separated")]
QueriesOpt = Annotated[int, typer.Option("--queries", min=1, help="timed queries per size")]
HomeOpt = Annotated[Path | None, typer.Option("--home", help="data folder (default: a temporary one, removed after)")]
IngestSampleOpt = Annotated[
    int,
    typer.Option(
        "--ingest-sample",
        min=1,
        help="episodes written and embedded end to end to measure ingest throughput; their vectors form the pool",
    ),
]
VectorsOpt = Annotated[
    str,
    typer.Option(
        "--vectors",
        help="auto (full if embedding the size takes under --full-budget seconds, else pool), full or pool",
    ),
]
FullBudgetOpt = Annotated[
    float,
    typer.Option(
        "--full-budget",
        help="seconds of real embedding allowed per size in auto mode",
    ),
]
BatchSizeOpt = Annotated[int, typer.Option("--batch-size", min=1, help="episodes per write_episodes call")]
LimitOpt = Annotated[int, typer.Option("--limit", min=1, max=50, help="memories per recall")]
ProfileDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--profile-dir",
        help="also run each query set under cProfile and write .prof files here",
    ),
]


def recall(
    sizes: SizesOpt = "1000,10000,100000",
    queries: QueriesOpt = 200,
    embedder: EmbedderOpt = "minilm",
    home: HomeOpt = None,
    out: OutOpt = Path("bench/out/recall_latency.json"),
    ingest_sample: IngestSampleOpt = 2000,
    vectors: VectorsOpt = "auto",
    full_budget: FullBudgetOpt = 60.0,
    batch_size: BatchSizeOpt = 500,
    seed: SeedOpt = 7,
    limit: LimitOpt = 8,
    profile_dir: ProfileDirOpt = None,
) -> None:
    """Server-side recall latency (p50/p95/p99) of one scope at several sizes, plus ingest rate."""
    from engramdb.core.embedding import is_local_spec
    from engramdb_bench.latency import run
    from engramdb_bench.latency_config import BenchConfig

    if not is_local_spec(embedder):
        raise typer.BadParameter("minilm, minilm-fast or hashing[:DIM]", param_hint="--embedder")
    config = BenchConfig(
        sizes=_sizes(sizes),
        queries=queries,
        embedder=embedder,
        home=home,
        ingest_sample=ingest_sample,
        batch_size=batch_size,
        seed=seed,
        vectors=vectors,
        full_embed_budget_s=full_budget,
        limit=limit,
        profile_dir=profile_dir,
    )
    try:
        result = run(config, progress=lambda line: _err.print(line, highlight=False))
    except EngramError as error:
        _err.print(f"[red]error:[/red] {error.message}")
        raise typer.Exit(1) from error
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    if not _out.is_terminal:  # a pipe or a file: do not squeeze the table into 80 columns
        _out.width = 150
    _out.print(_table(result))
    _out.print(_summary(result), highlight=False)
    _out.print(f"JSON written to {out}", highlight=False)


def _table(result: dict[str, Any]) -> Table:
    machine = result["machine"]
    table = Table(
        "size",
        "vectors",
        "cold load",
        "search p50",
        "p95",
        "p99",
        "dense p50",
        "lexical p50",
        "neighbours p50",
        "records p50",
        "CPU p50",
        "embed p50",
        "embed p95",
        title=f"recall latency in one scope, ms ({result['config']['embedderModel']}, "
        f"{machine['cpusUsable']} CPUs, Python {machine['python']})",
    )
    for row in result["results"]:
        search, parts, embed = row["searchMs"], row["breakdownMs"], row["embedMs"]
        table.add_row(
            f"{row['size']:,}",
            row["vectors"]["mode"],
            f"{row['coldLoadMs']:.1f}",
            _ms(search, "p50"),
            _ms(search, "p95"),
            _ms(search, "p99"),
            _ms(parts["dense"], "p50"),
            _ms(parts["lexical"], "p50"),
            _ms(parts.get("neighbours", {}), "p50"),
            _ms(parts["records"], "p50"),
            _ms(row["cpuMs"]["serverMinusEmbed"], "p50"),
            _ms(embed, "p50"),
            _ms(embed, "p95"),
        )
    return table


def _ms(stats: dict[str, float], key: str) -> str:
    # A stage the recall path did not go through (e.g. a store method renamed) shows as "-".
    return f"{stats[key]:.2f}" if key in stats else "-"


def _summary(result: dict[str, Any]) -> str:
    ingest = result["ingest"]
    lines = [
        f"ingest ({ingest['episodes']:,} episodes, {ingest['embedder']}): write "
        f"{ingest['writeEpisodesPerSec']:,.0f}/s, embed {ingest['embedEpisodesPerSec']:,.1f}/s, "
        f"end to end {ingest['endToEndEpisodesPerSec']:,.1f} episodes/s"
    ]
    target = result["targets"]
    if target["measured"]:
        verdict = "met" if target["p50Met"] and target["p99Met"] else "MISSED"
        lines.append(f"target at 10k (p50 <= 10 ms, p99 <= 30 ms): {verdict}")
    return "\n".join(lines)
