"""``engram bench langgraph``: the LangGraph store's calls at N items in one namespace
(engramdb_bench.langgraph_bench)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from engramdb.errors import EngramError


def langgraph(
    backends: Annotated[str, typer.Option(help="comma-separated: sqlite,postgres")] = "sqlite,postgres",
    items: Annotated[int, typer.Option(min=100, help="items in the namespace searched")] = 10_000,
    queries: Annotated[int, typer.Option(min=1, help="timed calls of each kind per backend")] = 200,
    embedder: Annotated[str, typer.Option(help="the server's embedder (minilm: the default server's)")] = "minilm",
    pg_url: Annotated[str | None, typer.Option(help="PostgreSQL URL (default: a throwaway server)")] = None,
    out: Annotated[Path, typer.Option(help="JSON result file")] = Path("bench/out/langgraph.json"),
    seed: Annotated[int, typer.Option(help="random seed")] = 7,
) -> None:
    """LangGraph's store (EngramStore) against a real server: search, filters, pages, get, list (p50/p95/p99)."""
    from engramdb_bench import langgraph_bench

    console = Console()
    chosen = [b.strip() for b in backends.split(",") if b.strip()]
    if not chosen or set(chosen) - set(langgraph_bench.BACKENDS):
        raise EngramError("--backends takes sqlite and/or postgres", field="--backends")
    result = langgraph_bench.run(
        chosen,
        items=items,
        queries=queries,
        embedder=embedder,
        pg_url=pg_url,
        seed=seed,
        progress=lambda line: console.print(line, highlight=False),
    )
    table = Table("backend", "call", "p50 ms", "p95 ms", "p99 ms")
    for r in result["results"]:
        for name, t in r["timingsMs"].items():
            table.add_row(r["backend"], name, f"{t['p50']:.2f}", f"{t['p95']:.2f}", f"{t['p99']:.2f}")
    console.print(table)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    console.print(f"JSON written to {out}")
