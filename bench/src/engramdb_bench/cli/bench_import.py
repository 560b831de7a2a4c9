"""``engram bench import``: 10,000 turns imported through REST against the plain batch write
(engramdb_bench.imports_bench)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from engramdb.errors import EngramError


def import_turns(
    turns: Annotated[int, typer.Option(min=100, help="turns written by each arm, each round")] = 10_000,
    rounds: Annotated[int, typer.Option(min=1, help="rounds, each writing the turns once by each arm")] = 2,
    blocks: Annotated[int, typer.Option(min=1, help="files the turns are cut into; the arms alternate by block")] = 10,
    embedder: Annotated[str, typer.Option(help="the server's embedder (hashing: the write path alone)")] = "hashing",
    backend: Annotated[str, typer.Option(help="sqlite or postgres")] = "sqlite",
    database_url: Annotated[str | None, typer.Option(help="PostgreSQL URL (default: a throwaway server)")] = None,
    out: Annotated[Path, typer.Option(help="JSON result file")] = Path("bench/out/import.json"),
    seed: Annotated[int, typer.Option(help="random seed of the synthetic turns")] = 7,
) -> None:
    """Imported turns (JSONL through import_file) against the plain batch write, in one run: the ratio."""
    from engramdb_bench.imports_bench import ImportBenchConfig, run

    console = Console()
    if backend not in ("sqlite", "postgres"):
        raise EngramError("--backend is sqlite or postgres", field="--backend")
    config = ImportBenchConfig(
        turns=turns,
        rounds=rounds,
        blocks=blocks,
        embedder=embedder,
        backend=backend,
        database_url=database_url,
        seed=seed,
    )
    result = run(config, progress=lambda line: console.print(line, highlight=False))
    table = Table(
        "backend", "turns", "rounds", "batch turns/s", "import turns/s", "import / batch", "CPU ratio", "again s"
    )
    table.add_row(
        result["backend"],
        f"{result['turns']:,}",
        str(len(result["rounds"])),
        f"{result['batchTurnsPerS']:,.0f}",
        f"{result['importTurnsPerS']:,.0f}",
        f"{result['ratio']:.1%}",
        f"{result['cpuRatio']:.1%}",
        f"{result['importAgain']['seconds']:.2f} (created {result['importAgain']['created']})",
    )
    console.print(table)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    console.print(f"JSON written to {out}")
