"""``engram bench scale``: recall with many scopes, both backends side by side (engramdb_bench.scale)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from engramdb.errors import EngramError


def scale(
    backends: Annotated[str, typer.Option(help="comma-separated: sqlite,postgres")] = "sqlite,postgres",
    totals: Annotated[str, typer.Option(help="total memories, comma-separated")] = "10000,100000,1000000",
    scopes: Annotated[int, typer.Option(help="scopes the memories are spread over")] = 1000,
    queries: Annotated[int, typer.Option(help="timed queries per run")] = 200,
    pg_url: Annotated[str | None, typer.Option(help="PostgreSQL URL (default: a throwaway server)")] = None,
    out: Annotated[Path, typer.Option(help="JSON result file")] = Path("bench/out/scale.json"),
    seed: Annotated[int, typer.Option(help="random seed")] = 7,
) -> None:
    """Recall p50/p99 and recall@10 versus exact with many scopes, both backends side by side."""
    from engramdb_bench import scale as scale_bench

    console = Console()
    chosen = [b.strip() for b in backends.split(",") if b.strip()]
    if not chosen or set(chosen) - set(scale_bench.BACKENDS):
        raise EngramError("--backends takes sqlite and/or postgres", field="--backends")
    sizes = _totals(totals, scopes)
    result = scale_bench.run(
        chosen,
        sizes,
        scopes=scopes,
        queries=queries,
        pg_url=pg_url,
        seed=seed,
        progress=lambda line: console.print(line, highlight=False),
    )
    console.print(_scale_table(result))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    console.print(f"JSON written to {out}")


def _totals(value: str, scopes: int) -> list[int]:
    try:
        sizes = [int(t) for t in value.split(",") if t.strip()]
    except ValueError as error:
        raise EngramError(f"--totals must be comma-separated integers: {error}", field="--totals") from error
    if not sizes or min(sizes) < scopes:
        raise EngramError("--totals must each be at least --scopes", field="--totals")
    return sizes


def _scale_table(result: dict[str, Any]) -> Table:
    table = Table(
        "backend",
        "total",
        "per scope",
        "recall p50 ms",
        "p99 ms",
        "repeat p50 ms",
        "repeat p99 ms",
        "vector arm p50 ms",
        "recall@10 vs exact",
    )
    for r in result["results"]:
        table.add_row(
            r["backend"],
            f"{r['total']:,}",
            f"{r['perScope']:,}",
            f"{r['recallP50Ms']:.2f}",
            f"{r['recallP99Ms']:.2f}",
            f"{r['repeatP50Ms']:.2f}",
            f"{r['repeatP99Ms']:.2f}",
            f"{r['vectorArmP50Ms']:.2f}",
            f"{r['recallAt10VsExact']:.4f}",
        )
    return table
