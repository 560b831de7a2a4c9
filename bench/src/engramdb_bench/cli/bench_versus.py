"""``engram bench versus``: EngramDB and Mem0 OSS on the same LoCoMo or BEAM turns (engramdb_bench.versus)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from engramdb_bench.cli.options import OutOpt, ReferenceEmbedderOpt, SeedOpt, ServedEmbedderOpt, served_embedders

DatasetOpt = Annotated[str, typer.Option(help="locomo, or beam (its user turns with their answers)")]
DataOpt = Annotated[
    Path | None, typer.Option(help="LoCoMo file, or BEAM's folder (default: the one under ../shared/bench)")
]
SystemsOpt = Annotated[
    str,
    typer.Option(
        help="comma-separated: engramdb, reference (the bare pipeline, asked interleaved with engramdb), mem0"
    ),
]
DEFAULT_DATA = {"locomo": Path("../shared/bench/locomo/locomo10.json"), "beam": Path("../shared/bench/beam")}
_out = Console()
_err = Console(stderr=True, soft_wrap=True)


def versus(
    dataset: DatasetOpt = "locomo",
    data: DataOpt = None,
    tier: Annotated[str, typer.Option(help="BEAM's tier")] = "100K",
    systems: SystemsOpt = "engramdb,reference,mem0",
    conversations: Annotated[int | None, typer.Option(min=1, help="only the first N conversations")] = None,
    questions: Annotated[int | None, typer.Option(min=1, help="at most N questions per conversation")] = None,
    embedder: ServedEmbedderOpt = "auto",
    reference_embedder: ReferenceEmbedderOpt = None,
    mem0_python: Annotated[
        str | None, typer.Option(help="interpreter with the versus extra for Mem0 (default: this one)")
    ] = None,
    work: Annotated[Path | None, typer.Option(help="work folder, kept (default: a temporary one)")] = None,
    gaps: Annotated[
        str,
        typer.Option(help="ms of quiet before each interleaved request, one pass per value (0: back to back)"),
    ] = "0,200",
    out: OutOpt = Path("bench/out/versus.json"),
    seed: SeedOpt = 7,
) -> None:
    """EngramDB and Mem0 OSS on the same LoCoMo or BEAM turns: recall@k, ingest, latency, memory, disk."""
    import sys

    from engramdb_bench.versus import report
    from engramdb_bench.versus.run import Mem0UnavailableError, VersusConfig, run

    embedder, reference_embedder = served_embedders(embedder, reference_embedder)
    config = VersusConfig(
        data=data or DEFAULT_DATA.get(dataset, DEFAULT_DATA["locomo"]),
        dataset=dataset,
        tier=tier,
        systems=tuple(s.strip() for s in systems.split(",") if s.strip()),
        conversations=conversations,
        questions=questions,
        embedder=embedder,
        reference_embedder=reference_embedder,
        mem0_python=mem0_python or sys.executable,
        work=work,
        seed=seed,
        gaps=tuple(float(g) for g in gaps.split(",") if g.strip()),
    )
    try:
        config.validate()
        with _bars() as bars:
            result = run(config, progress=bars)
    except (ValueError, Mem0UnavailableError) as error:
        _err.print(f"[red]error:[/red] {error}", highlight=False)
        raise typer.Exit(1) from error
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    if not _out.is_terminal:
        _out.width = 150
    _out.print(report.table(result))
    for line in report.summary(result):
        _out.print(line, highlight=False)
    _out.print(f"JSON written to {out}", highlight=False)


class _Bars:
    """Progress bars on stderr, one per task, grown as the tasks report their totals."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=_err
        )
        self.tasks: dict[str, Any] = {}

    def __call__(self, task: str, advance: int, total: int | None) -> None:
        if task not in self.tasks:
            self.tasks[task] = self.progress.add_task(task, total=total)
        elif total is not None:
            self.progress.update(self.tasks[task], total=total)
        if advance:
            self.progress.advance(self.tasks[task], advance)

    def __enter__(self) -> _Bars:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


def _bars() -> _Bars:
    return _Bars()
