"""``engram bench``: benchmarks that run against the installed package (no server needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from engramdb.errors import EngramError
from engramdb_bench.cli.bench_faults import faults
from engramdb_bench.cli.bench_load import load

bench_app = typer.Typer(help="Benchmarks (results as a table and a JSON file).", no_args_is_help=True)
_out = Console()
_err = Console(stderr=True, soft_wrap=True)


@bench_app.callback()
def _bench() -> None:
    """Benchmarks (results as a table and a JSON file)."""


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
EmbedderOpt = Annotated[str, typer.Option("--embedder", help="minilm, minilm-fast or hashing")]
HomeOpt = Annotated[Path | None, typer.Option("--home", help="data folder (default: a temporary one, removed after)")]
OutOpt = Annotated[Path, typer.Option("--out", help="JSON result file")]
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
SeedOpt = Annotated[int, typer.Option("--seed", help="corpus and query seed")]
LimitOpt = Annotated[int, typer.Option("--limit", min=1, max=50, help="memories per recall")]
ProfileDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--profile-dir",
        help="also run each query set under cProfile and write .prof files here",
    ),
]


@bench_app.command("recall")
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


@bench_app.command("models")
def models(
    turns: Annotated[int, typer.Option(min=10, help="turns extracted through the queue")] = 300,
    seed_memories: Annotated[int, typer.Option(min=10, help="episodes in the scope before the run")] = 1000,
    seed_facts: Annotated[int, typer.Option(min=0, help="stated facts in the scope (judgement's neighbours)")] = 100,
    queries: Annotated[int, typer.Option(min=10, help="recall queries per phase")] = 200,
    model_ms: Annotated[float, typer.Option(min=0, help="the scripted model's answer time, ms")] = 50.0,
    workers: Annotated[int, typer.Option(min=1, help="the server's extraction threads (llm.workers)")] = 8,
    embedder: EmbedderOpt = "minilm",
    out: OutOpt = Path("bench/out/models.json"),
) -> None:
    """Model-assisted memory's own cost: overhead per extracted turn, turns/s through the queue, recall
    latency with the queue idle and busy (a scripted model on loopback, the real server)."""
    from engramdb_bench.model_bench import ModelBenchConfig, run

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
    _out.print(_models_table(result))
    _out.print(f"JSON written to {out}", highlight=False)


def _models_table(result: dict[str, Any]) -> Table:
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


@bench_app.command("scale")
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


@bench_app.command("records")
def records(
    backends: Annotated[str, typer.Option(help="comma-separated: sqlite,postgres")] = "sqlite,postgres",
    count: Annotated[int, typer.Option("--records", min=10, help="records in the queried scope")] = 100_000,
    queries: Annotated[int, typer.Option(min=1, help="timed where-queries per backend")] = 200,
    import_records: Annotated[
        int, typer.Option("--import-records", min=10, max=10_000, help="nested records in the bulk import")
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


@bench_app.command("versus")
def versus(
    data: Annotated[Path, typer.Option(help="LoCoMo file")] = Path("../shared/bench/locomo/locomo10.json"),
    systems: Annotated[str, typer.Option(help="comma-separated: engramdb,mem0")] = "engramdb,mem0",
    conversations: Annotated[int | None, typer.Option(min=1, help="only the first N conversations")] = None,
    questions: Annotated[int | None, typer.Option(min=1, help="at most N questions per conversation")] = None,
    embedder: Annotated[str, typer.Option(help="EngramDB's embedder: minilm (as Mem0's model) or hashing")] = "minilm",
    mem0_python: Annotated[
        str | None, typer.Option(help="interpreter with the versus extra for Mem0 (default: this one)")
    ] = None,
    work: Annotated[Path | None, typer.Option(help="work folder, kept (default: a temporary one)")] = None,
    out: OutOpt = Path("bench/out/versus.json"),
    seed: SeedOpt = 7,
) -> None:
    """EngramDB and Mem0 OSS on the same LoCoMo turns: recall@k, ingest, latency, memory, disk."""
    import sys

    from engramdb_bench.versus import report
    from engramdb_bench.versus.run import Mem0UnavailableError, VersusConfig, run

    config = VersusConfig(
        data=data,
        systems=tuple(s.strip() for s in systems.split(",") if s.strip()),
        conversations=conversations,
        questions=questions,
        embedder=embedder,
        mem0_python=mem0_python or sys.executable,
        work=work,
        seed=seed,
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


@bench_app.command("bigscope")
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


bench_app.command("load")(load)  # in its own module, as this one is near its size limit
bench_app.command("faults")(faults)
