"""``engram bench load``: open-loop mixed load against a real server (engramdb_bench.load)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from engramdb.errors import EngramError
from engramdb_bench.cli.options import ReferenceEmbedderOpt, ServedEmbedderOpt, served_embedders

if TYPE_CHECKING:
    from engramdb_bench.load import LoadConfig

_out = Console()
_err = Console(stderr=True, soft_wrap=True)


def load(
    rates: Annotated[str, typer.Option(help="offered requests/s, comma-separated, each run in turn")] = "50,100,200",
    seconds: Annotated[float, typer.Option(min=1, help="seconds each rate is offered")] = 30.0,
    memories: Annotated[int, typer.Option(min=1, help="memories in the one scope the requests use")] = 10_000,
    recall_share: Annotated[float, typer.Option(min=0, max=1, help="share of recalls (the rest are writes)")] = 0.7,
    embedder: ServedEmbedderOpt = "auto",
    reference_embedder: ReferenceEmbedderOpt = None,
    max_in_flight: Annotated[int, typer.Option(min=0, help="the server's ENGRAM_MAX_IN_FLIGHT")] = 32,
    out: Annotated[Path, typer.Option("--out", help="JSON result file")] = Path("bench/out/load.json"),
    seed: Annotated[int, typer.Option("--seed", help="corpus and query seed")] = 7,
    long_episodes: Annotated[
        int,
        typer.Option(
            min=0,
            help="first, long episodes (past 256 tokens) embedded in batches of 64 on the empty server, then its RSS",
        ),
    ] = 1_000,
    reference: Annotated[
        bool,
        typer.Option(
            "--reference/--no-reference",
            help="also offer the bare pipeline (python -m engramdb_bench.reference) the same rates, recalls only, "
            "and report the capacities' ratio",
        ),
    ] = True,
) -> None:
    """Open-loop recalls and writes on a real server: achieved rate, p50/p99, refusals, errors, RSS per rate."""
    from engramdb_bench.load import LoadConfig, run

    served, reference_served = served_embedders(embedder, reference_embedder)
    config = LoadConfig(
        rates=_rates(rates),
        seconds=seconds,
        memories=memories,
        recall_share=recall_share,
        embedder=served,
        reference_embedder=reference_served,
        seed=seed,
        max_in_flight=max_in_flight,
        long_episodes=long_episodes,
        reference=reference,
    )
    try:
        result = run(config, progress=lambda line: _err.print(line, highlight=False))
    except EngramError as error:
        _err.print(f"[red]error:[/red] {error.message}")
        raise typer.Exit(1) from error
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    _out.print(_table(result, config))
    if result["longEpisodes"]:
        long = result["longEpisodes"]
        _out.print(
            f"{long_episodes:,} long episodes embedded in {long['seconds']:.1f} s: server RSS "
            f"{long['rssAfterMb']:.0f} MB after, {long['rssMaxMb']:.0f} MB at most",
            highlight=False,
        )
    if result.get("reference") is not None:
        _print_reference(result, config)
    _out.print(f"JSON written to {out}", highlight=False)


def _print_reference(result: dict[str, Any], config: LoadConfig) -> None:
    """The reference arm's rows, and the two capacities with their ratio."""
    _out.print(_table(result, config, arm="reference"))
    ratio = result["capacityRatio"]
    _out.print(
        f"capacity (p99 < 100 ms, served whole): EngramDB {result['capacityPerS']:g}/s at "
        f"{config.recall_share:.0%} recall, the reference {result['referenceCapacityPerS']:g}/s recalls only"
        + (f": {ratio:.2f}x" if ratio is not None else ""),
        highlight=False,
    )


def _rates(rates: str) -> list[float]:
    try:
        offered = [float(r) for r in rates.split(",") if r.strip()]
    except ValueError as error:
        raise typer.BadParameter("comma-separated numbers, e.g. 50,100,200", param_hint="--rates") from error
    if not offered or min(offered) <= 0:
        raise typer.BadParameter("rates must be positive", param_hint="--rates")
    return offered


def _table(result: dict[str, Any], config: LoadConfig, arm: str = "engramdb") -> Table:
    title = (
        f"open-loop load, {config.memories:,} memories in one scope, {config.recall_share:.0%} recall "
        f"({config.embedder}); RSS after fill {result['rssAfterFillMb']:.0f} MB"
        if arm == "engramdb"
        else f"the reference (bare pipeline), the same {config.memories:,} memories, recalls only "
        f"({config.reference_embedder or config.embedder})"
    )
    table = Table(
        "offered/s",
        "achieved/s",
        "p50 ms",
        "p99 ms",
        "refused (429/503)",
        "errors",
        "server RSS max MB",
        title=title,
    )
    for row in result["results" if arm == "engramdb" else "reference"]:
        table.add_row(
            f"{row['offeredPerS']:g}",
            f"{row['achievedPerS']:.1f}",
            f"{row['p50Ms']:.1f}",
            f"{row['p99Ms']:.1f}",
            str(row["refused"]),
            str(row["errors"]),
            f"{row['rssMaxMb']:.0f}",
        )
    return table
