"""``engram bench bigscope``: recall in one very large scope and over many scopes (engramdb_bench.bigscope)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from engramdb.errors import EngramError


def bigscope(
    backends: Annotated[str, typer.Option(help="comma-separated: sqlite,postgres")] = "sqlite,postgres",
    layouts: Annotated[
        str,
        typer.Option(
            help="comma-separated: one:N (N memories in one scope) or spread:N:S (N over S scopes)",
        ),
    ] = "one:10000,one:100000,one:1000000,spread:1000000:1000",
    queries: Annotated[int, typer.Option(help="timed queries per layout (LoCoMo questions)")] = 200,
    ingest: Annotated[int, typer.Option(help="texts for the ingest comparison (0: skip it)")] = 2000,
    pg_url: Annotated[str | None, typer.Option(help="PostgreSQL URL (default: a throwaway server)")] = None,
    data: Annotated[Path, typer.Option(help="the shared benchmark folder (LoCoMo, LongMemEval)")] = Path(
        "../shared/bench"
    ),
    cache: Annotated[Path, typer.Option(help="where the corpus's model vectors are cached")] = Path("bench/out/cache"),
    out: Annotated[Path, typer.Option(help="JSON result file")] = Path("bench/out/bigscope.json"),
    probe_shares: Annotated[
        str, typer.Option(help="other ann_probe_share values to time and check where a scope is searched by lists")
    ] = "",
    restarts: Annotated[
        int, typer.Option(min=1, help="server restarts timed for the first recall (more: steadier)")
    ] = 1,
) -> None:
    """Recall in one very large scope and over many scopes, memory, restart and ingest, both backends."""
    from engramdb.config import tune_process
    from engramdb.core.embedding import make_embedder
    from engramdb_bench import bigscope as big
    from engramdb_bench.bigscope_corpus import load
    from engramdb_bench.bigscope_model import Layout

    tune_process()
    console = Console()
    chosen = [b.strip() for b in backends.split(",") if b.strip()]
    if not chosen or set(chosen) - {"sqlite", "postgres"}:
        raise EngramError("--backends takes sqlite and/or postgres", field="--backends")
    try:
        plan = [Layout.parse(part.strip()) for part in layouts.split(",") if part.strip()]
    except ValueError as error:
        raise EngramError(str(error), field="--layouts") from error

    def progress(line: str) -> None:
        console.print(line, highlight=False)

    corpus = load(data, cache, make_embedder("minilm"), progress)
    shares = [float(x) for x in probe_shares.split(",") if x.strip()]
    result = big.run(
        corpus,
        chosen,
        plan,
        queries=queries,
        pg_url=pg_url,
        ingest=ingest,
        progress=progress,
        probe_shares=shares,
        restarts=restarts,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    console.print(_bigscope_table(result))
    console.print(f"JSON written to {out}")


def _bigscope_table(result: dict[str, Any]) -> Table:
    table = Table(
        "backend",
        "layout",
        "search p50",
        "p95",
        "p99",
        "dense p50",
        "lexical p50",
        "first of scope p50",
        "recall@10 vs exact",
        "ready s",
        "first after restart",
        "warm p50 (HTTP)",
        "peak RSS MB",
        "load rows/s",
        "disk MB",
        title="bigscope (ms unless said)",
    )
    for r in result["results"]:
        search, server = r["recall"]["searchMs"], r["server"]
        table.add_row(
            r["backend"],
            r["layout"],
            str(search["p50"]),
            str(search["p95"]),
            str(search["p99"]),
            str(r["recall"]["denseArmMs"]["p50"]),
            str(r["recall"]["lexicalArmMs"]["p50"]),
            str(r["recall"]["firstRecallOfScopeMs"]["p50"]),
            str(r["recallAt10VsExact"]),
            f"{server['startToReadyMs'] / 1000:.1f}",
            str(server["firstRecallMs"]),
            str(server["warmRecallMs"].get("p50")),
            str(server["peakRssMb"]),
            str(r["load"]["rowsPerSecond"]),
            str(r["diskMb"]),
        )
    return table
