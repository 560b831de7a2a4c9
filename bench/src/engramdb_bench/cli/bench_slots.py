"""``engram bench slots``: a fact write and its history as a slot's versions grow (engramdb_bench.slots_bench)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from engramdb.errors import EngramError


def slots(
    backends: Annotated[str, typer.Option(help="comma-separated: sqlite,postgres")] = "sqlite,postgres",
    versions: Annotated[int, typer.Option(min=20, help="facts written to the one slot")] = 1_000,
    window: Annotated[
        int, typer.Option(min=5, help="writes in each timed window (the first and the last compared)")
    ] = 100,
    reads: Annotated[int, typer.Option(min=1, help="timed reads of the newest fact's history")] = 5,
    pg_url: Annotated[str | None, typer.Option(help="PostgreSQL URL (default: a throwaway server)")] = None,
    out: Annotated[Path, typer.Option(help="JSON result file")] = Path("bench/out/slots.json"),
) -> None:
    """Fact slots: the write in the first and the last window of versions (their ratio), and the history read."""
    from engramdb_bench import slots_bench

    console = Console()
    chosen = [b.strip() for b in backends.split(",") if b.strip()]
    if not chosen or set(chosen) - set(slots_bench.BACKENDS):
        raise EngramError("--backends takes sqlite and/or postgres", field="--backends")
    if versions < 2 * window:
        raise EngramError("--versions must hold at least two windows", field="--versions")
    result = slots_bench.run(
        chosen,
        versions=versions,
        window=window,
        reads=reads,
        pg_url=pg_url,
        progress=lambda line: console.print(line, highlight=False),
    )
    table = Table("backend", "versions", "first write ms", "last write ms", "last/first", "history ms", "history/write")
    for r in result["results"]:
        table.add_row(
            r["backend"],
            f"{r['versions']:,}",
            f"{r['firstWriteMs']:.2f}",
            f"{r['lastWriteMs']:.2f}",
            f"{r['lastOverFirst']:.2f}x",
            f"{r['historyMs']:.1f}",
            f"{r['historyOverWrite']:.1f}x",
        )
    console.print(table)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    console.print(f"JSON written to {out}")
