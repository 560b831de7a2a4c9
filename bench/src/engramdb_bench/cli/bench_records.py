"""``engram bench records``: the knowledge plane's where-queries and bulk import (engramdb_bench.records_bench)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from engramdb.errors import EngramError


def records(
    backends: Annotated[str, typer.Option(help="comma-separated: sqlite,postgres")] = "sqlite,postgres",
    count: Annotated[int, typer.Option("--records", min=10, help="records in the queried scope")] = 100_000,
    queries: Annotated[int, typer.Option(min=1, help="timed where-queries per backend")] = 200,
    import_records: Annotated[
        int, typer.Option("--import-records", min=10, max=10_000, help="nested records to import (1,000 a write)")
    ] = 10_000,
    pg_url: Annotated[str | None, typer.Option(help="PostgreSQL URL (default: a throwaway server)")] = None,
    out: Annotated[Path, typer.Option(help="JSON result file")] = Path("bench/out/records.json"),
    seed: Annotated[int, typer.Option(help="random seed")] = 7,
) -> None:
    """Knowledge plane: a nested where over one big scope (p50/p99) and an idempotent bulk import."""
    from engramdb_bench import records_bench

    console = Console()
    chosen = [b.strip() for b in backends.split(",") if b.strip()]
    if not chosen or set(chosen) - set(records_bench.BACKENDS):
        raise EngramError("--backends takes sqlite and/or postgres", field="--backends")
    result = records_bench.run(
        chosen,
        records=count,
        queries=queries,
        import_records=import_records,
        pg_url=pg_url,
        seed=seed,
        progress=lambda line: console.print(line, highlight=False),
    )
    table = Table(
        "backend",
        "records",
        "where p50 ms",
        "p95 ms",
        "p99 ms",
        "counted p50 ms",
        "p99 ms",
        "load records/s",
        "import s",
        "import again s",
        "created again",
    )
    for r in result["results"]:
        imported = r["import"]
        table.add_row(
            r["backend"],
            f"{r['records']:,}",
            f"{r['whereP50Ms']:.2f}",
            f"{r['whereP95Ms']:.2f}",
            f"{r['whereP99Ms']:.2f}",
            f"{r['countedP50Ms']:.2f}",
            f"{r['countedP99Ms']:.2f}",
            f"{r['loadRecordsPerS']:,.0f}",
            f"{imported['firstS']:.2f}",
            f"{imported['againS']:.2f}",
            str(imported["againCreated"]),
        )
    console.print(table)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    console.print(f"JSON written to {out}")
