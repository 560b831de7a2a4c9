"""``engram eval``: retrieval quality on LoCoMo and LongMemEval through the production paths."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, ClassVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from engramdb.errors import EngramError

eval_app = typer.Typer(
    help="Retrieval quality on LoCoMo and LongMemEval (tables and a JSON file).", no_args_is_help=True
)
_out = Console()
_err = Console(stderr=True, soft_wrap=True)

ArmsOpt = Annotated[
    str | None,
    typer.Option(
        "--arms",
        help="comma-separated arms: bm25 (lexical alone), vector (dense alone), hybrid (production), "
        "expand (hybrid with one-hop expansion), plain (hybrid without time words, newer-first and entity "
        "links); default the first three, or hybrid through REST",
    ),
]
RestOpt = Annotated[
    bool,
    typer.Option(
        "--rest",
        help="through the REST API of a fresh server this command runs on 127.0.0.1",
    ),
]
UrlOpt = Annotated[
    str | None,
    typer.Option(
        "--url",
        help="through the REST API of this running server (with --key, an admin key)",
    ),
]
KeyOpt = Annotated[str | None, typer.Option("--key", envvar="ENGRAM_KEY", help="admin key for --url")]
GranularityOpt = Annotated[
    str,
    typer.Option(
        "--granularity",
        help="documents: turn, pair (a turn and the next) or session",
    ),
]
LimitConvOpt = Annotated[
    int | None,
    typer.Option(
        "--limit-conversations",
        min=1,
        help="only the first N conversations (LongMemEval: questions)",
    ),
]
LimitQOpt = Annotated[
    int | None,
    typer.Option(
        "--limit-questions",
        min=1,
        help="at most N scorable questions per conversation",
    ),
]
EmbedderOpt = Annotated[str, typer.Option("--embedder", help="minilm (default), minilm-fast or hashing[:DIM]")]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="JSON result (default bench/out/eval_<dataset>.json; _<granularity> added unless turn)",
    ),
]
HomeOpt = Annotated[
    Path | None,
    typer.Option(
        "--home",
        help="data folder (default: a temporary one, removed after); a reused folder skips re-embedding",
    ),
]
MarkdownOpt = Annotated[Path | None, typer.Option("--markdown", help="also write the tables as Markdown here")]
KsOpt = Annotated[
    str,
    typer.Option(
        "--ks", help="comma-separated depths at which recall is scored, 1 to 50 (recall asks for the largest)"
    ),
]
LongMemEvalDataOpt = Annotated[
    Path,
    typer.Option(
        "--data",
        help="folder of one-JSON-per-question files (or one JSON list)",
        exists=True,
    ),
]


@eval_app.callback()
def _eval() -> None:
    """Retrieval quality on LoCoMo and LongMemEval (tables and a JSON file)."""


@eval_app.command("locomo")
def locomo(
    data: Annotated[Path, typer.Option("--data", help="locomo10.json", exists=True, dir_okay=False)],
    arms: ArmsOpt = None,
    granularity: GranularityOpt = "turn",
    limit_conversations: LimitConvOpt = None,
    limit_questions: LimitQOpt = None,
    embedder: EmbedderOpt = "minilm",
    out: OutOpt = None,
    home: HomeOpt = None,
    markdown: MarkdownOpt = None,
    ks: KsOpt = "1,5,10,20",
    rest: RestOpt = False,
    url: UrlOpt = None,
    key: KeyOpt = None,
) -> None:
    """LoCoMo: one scope per conversation, one episode per turn ('Speaker: text') by default."""
    _evaluate(
        "locomo",
        data,
        arms,
        granularity,
        limit_conversations,
        limit_questions,
        embedder,
        out,
        home,
        markdown,
        rest,
        url,
        key,
        ks=ks,
    )


@eval_app.command("longmemeval")
def longmemeval(
    data: LongMemEvalDataOpt,
    arms: ArmsOpt = None,
    granularity: GranularityOpt = "turn",
    limit_conversations: LimitConvOpt = None,
    limit_questions: LimitQOpt = None,
    embedder: EmbedderOpt = "minilm",
    out: OutOpt = None,
    home: HomeOpt = None,
    markdown: MarkdownOpt = None,
    ks: KsOpt = "1,5,10,20",
    rest: RestOpt = False,
    url: UrlOpt = None,
    key: KeyOpt = None,
) -> None:
    """LongMemEval: one scope per question, user turns indexed (turn granularity by default)."""
    _evaluate(
        "longmemeval",
        data,
        arms,
        granularity,
        limit_conversations,
        limit_questions,
        embedder,
        out,
        home,
        markdown,
        rest,
        url,
        key,
        ks=ks,
    )


@eval_app.command("beam")
def beam(
    data: Annotated[
        Path, typer.Option("--data", help="BEAM folder holding the tier folders", exists=True, file_okay=False)
    ] = Path("../shared/bench/beam"),
    tier: Annotated[str, typer.Option("--tier", help="tier folder: 100K, 500K, 1M or 10M")] = "100K",
    conversations: Annotated[
        str | None, typer.Option("--conversations", help="comma-separated conversation folders (default: every one)")
    ] = None,
    arms: ArmsOpt = None,
    embedder: EmbedderOpt = "minilm",
    out: OutOpt = None,
    home: HomeOpt = None,
    markdown: MarkdownOpt = None,
    ks: KsOpt = "1,5,10,20",
    rest: RestOpt = False,
    url: UrlOpt = None,
    key: KeyOpt = None,
) -> None:
    """BEAM: one scope per conversation, one episode per user message and its answer, as the SDK writes them."""
    names = tuple(c.strip() for c in conversations.split(",") if c.strip()) if conversations else None
    _evaluate(
        "beam",
        data,
        arms,
        "pair",
        None,
        None,
        embedder,
        out,
        home,
        markdown,
        rest,
        url,
        key,
        ks=ks,
        extra={"tier": tier, "conversations": names},
    )


@eval_app.command("report")
def report(result: Annotated[Path, typer.Argument(help="a JSON file written by engram eval", exists=True)]) -> None:
    """Print the tables of an earlier run as Markdown."""
    from engramdb_bench.report import markdown as to_markdown

    _out.print(to_markdown(json.loads(result.read_text())), highlight=False, markup=False, soft_wrap=True)


def _evaluate(
    dataset: str,
    data: Path,
    arms: str | None,
    granularity: str,
    limit_conversations: int | None,
    limit_questions: int | None,
    embedder: str,
    out: Path | None,
    home: Path | None,
    markdown: Path | None,
    rest: bool,
    url: str | None,
    key: str | None,
    ks: str,
    extra: dict[str, Any] | None = None,
) -> None:
    from engramdb.core.embedding import is_local_spec
    from engramdb_bench.report import markdown as to_markdown
    from engramdb_bench.runner import EvalConfig, run

    if not is_local_spec(embedder):
        raise typer.BadParameter("minilm, minilm-fast or hashing[:DIM]", param_hint="--embedder")
    arms = arms or ("hybrid" if rest or url else "bm25,vector,hybrid")
    config = EvalConfig(
        dataset=dataset,
        data=data,
        arms=tuple(a.strip() for a in arms.split(",") if a.strip()),
        granularity=granularity,
        limit_conversations=limit_conversations,
        limit_questions=limit_questions,
        embedder=embedder,
        home=home,
        rest=rest,
        url=url,
        key=key,
        ks=_depths(ks),
        **(extra or {}),
    )
    try:
        config.validate()
    except ValueError as error:
        raise typer.BadParameter(str(error)) from error
    suffix = f"_{config.tier}" if dataset == "beam" else ("" if granularity == "turn" else f"_{granularity}")
    out = out or Path(f"bench/out/eval_{dataset}{suffix}{'_rest' if rest or url else ''}.json")
    try:
        with _RichProgress() as progress:
            result = run(config, progress)
    except (EngramError, ValueError, KeyError) as error:
        message = error.message if isinstance(error, EngramError) else f"{type(error).__name__}: {error}"
        _err.print(f"[red]error:[/red] {message}", highlight=False)
        raise typer.Exit(1) from error
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(_finite(result), indent=1) + "\n")
    if markdown is not None:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(to_markdown(result))
    _print(result)
    _out.print(f"JSON written to {out}", highlight=False)


def _depths(ks: str) -> tuple[int, ...]:
    """The ``--ks`` depths, in order (EvalConfig checks their range)."""
    try:
        return tuple(sorted({int(k) for k in ks.split(",") if k.strip()}))
    except ValueError as error:
        raise typer.BadParameter("whole numbers, comma-separated: 1,5,10,20", param_hint="--ks") from error


def _print(result: dict[str, Any]) -> None:
    from engramdb_bench import report as r

    if not _out.is_terminal:  # a pipe or a file: do not squeeze the tables into 80 columns
        _out.width = 200
    title = f"{result['dataset']} ({result['config']['granularity']} documents, {result['config']['embedderModel']})"
    _out.print(_rich(r.target_table(result), f"{title}: against the BM25 floors and the targets"))
    _out.print(_rich(r.turn_table(result), f"{title}: turn-level evidence recall@k", grouped=True))
    _out.print(_rich(r.session_table(result), f"{title}: session level (the server's session ranking)", grouped=True))
    _out.print(_rich(r.timing_table(result), f"{title}: recall latency"))
    for line in r.summary_lines(result):
        _out.print(line, highlight=False, markup=False)


def _rich(table: tuple[list[str], list[list[str]]], title: str, *, grouped: bool = False) -> Table:
    headers, rows = table
    out = Table(*headers, title=title)
    previous = None
    for row in rows:
        if grouped and previous is not None and row[0] != previous:
            out.add_section()
        out.add_row(*row)
        previous = row[0]
    return out


def _finite(value: Any) -> Any:
    """Return ``value`` with NaN and infinities replaced by None (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


class _RichProgress:
    """The runner's progress sink as rich progress bars on stderr."""

    _LABELS: ClassVar[dict[str, str]] = {
        "conversations": "conversations",
        "embedding": "embedding",
        "questions": "questions x arms",
    }

    def __init__(self) -> None:
        self._progress = Progress(
            TextColumn("{task.description:>16}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=_err,
        )
        self._tasks: dict[str, TaskID] = {}
        self._totals: dict[str, int] = {}

    def __enter__(self) -> _RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def _task(self, name: str) -> TaskID:
        if name not in self._tasks:
            self._tasks[name] = self._progress.add_task(self._LABELS.get(name, name), total=0)
        return self._tasks[name]

    def grow(self, task: str, total: int) -> None:
        self._totals[task] = self._totals.get(task, 0) + total
        self._progress.update(self._task(task), total=self._totals[task])

    def advance(self, task: str, n: int = 1) -> None:
        self._progress.advance(self._task(task), n)
