"""``engram import``: other products' conversations as episodes, a subcommand per source
(``engram import chatgpt conversations.json``); and, as before, ``engram import --in FILE``, which
loads an ``engram export`` into an empty tenant.

The sources are subcommands of the one ``import`` so that the tenant import keeps its name and
flags, and each format has its own help. A source import runs on the data folder, or against a
server with ``--url`` and ``--key`` (through ``write_episode_batch``, as the SDK's ``import_file``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from engramdb.cli import operator
from engramdb.cli.context import DEFAULT_TENANT, Local, Remote, Target, local_scope
from engramdb.errors import EngramError
from engramdb.integrations.imports import SOURCES, ImportReport, import_file

out = Console()
err = Console(stderr=True)
_AFTER = (
    "\n\nEach turn becomes one episode, at its original time, after the capture rules (secrets and paths "
    "redacted); importing the file again writes nothing. docs/integrations.md says what is read of each format."
)
HELP = {
    "claude-code": "A Claude Code session transcript (~/.claude/projects/<project>/<session id>.jsonl): each "
    "answered turn, the person's prompt and the final answer, under the id its hooks give it.",
    "chatgpt": "ChatGPT's data export (conversations.json): each conversation's branch last seen, a turn per user "
    "message and the assistant's final answer.",
    "mem0": "A Mem0 export (what get_all returns, saved as JSON): each memory one episode, the user's (or the "
    "assistant's, by its role), at its created_at.",
    "zep": 'Zep or Graphiti episodes (JSON: {"episodes": [...]} or a list): chat messages paired into turns per '
    "session, text episodes as they are.",
    "jsonl": "Plain chat, one JSON object a line: messages ({role, content}) paired into turns, or turns ({user, "
    "assistant}); by session, time and id where given.",
}

import_app = typer.Typer(
    help="Import other products' conversations as episodes (a source below), or load an `engram export` file "
    "into an empty tenant (--in).",
    invoke_without_command=True,
)


@import_app.callback()
def tenant_import(
    ctx: typer.Context,
    in_path: Annotated[str | None, typer.Option("--in", help="a JSONL file written by engram export")] = None,
    tenant: Annotated[str | None, typer.Option("--tenant", help="target tenant (default: the exported one)")] = None,
    home: operator.HomeOpt = None,
) -> None:
    """Load an `engram export` file into an empty tenant (--in); or name a source to import conversations."""
    if ctx.invoked_subcommand is not None:
        if in_path is not None:
            raise EngramError("--in loads an engram export; a source imports conversations: one or the other")
        return
    if in_path is None:
        out.print(ctx.get_help())
        raise typer.Exit(2)
    operator.import_tenant(in_path, tenant, home)


def _source_command(source: str) -> Any:
    def command(
        file: Annotated[Path, typer.Argument(help="the file to import", exists=True, dir_okay=False, readable=True)],
        dry_run: Annotated[bool, typer.Option("--dry-run", help="count what would be written; write nothing")] = False,
        extract: Annotated[
            bool | None,
            typer.Option("--extract/--no-extract", help="queue fact extraction (default: when the server has a model)"),
        ] = None,
        user_id: Annotated[str | None, typer.Option("--user-id", help="the participant, by your own id")] = None,
        agent_id: Annotated[str | None, typer.Option("--agent-id", help="agentId of the scope")] = None,
        profile_id: Annotated[str | None, typer.Option("--profile-id", help="profileId of the scope")] = None,
        privacy: Annotated[str | None, typer.Option("--privacy", help="private or shared")] = None,
        participant: Annotated[str | None, typer.Option("--participant", help="participantScopeHash")] = None,
        sandbox: Annotated[str | None, typer.Option("--sandbox-eligible", help="true or false")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="print what was done as JSON")] = False,
        tenant: Annotated[str, typer.Option("--tenant", help="tenant on the data folder")] = DEFAULT_TENANT,
        home: operator.HomeOpt = None,
        url: Annotated[str | None, typer.Option("--url", envvar="ENGRAM_URL", help="import into this server")] = None,
        key: Annotated[str | None, typer.Option("--key", envvar="ENGRAM_KEY", help="the key (with --url)")] = None,
    ) -> None:
        named = {
            "agentId": agent_id,
            "profileId": profile_id,
            "privacyScope": privacy,
            "participantScopeHash": participant,
            "userId": user_id,
            "sandboxEligible": None if sandbox is None else operator.truth("--sandbox-eligible", sandbox),
        }
        named = {k: v for k, v in named.items() if v is not None}
        target: Target = Remote(url, key) if url else Local(home, tenant)
        if not url and "userId" not in named:
            named = {**local_scope(), **named}  # on the data folder, this machine's user's scope by default
        try:
            report = _run(target, source, file, named, dry_run=dry_run, extract=extract, quiet=as_json)
        finally:
            target.close()
        if as_json:
            print(json.dumps(report.wire(), ensure_ascii=False))
        else:
            _show(report)

    command.__name__ = source.replace("-", "_")
    return command


def _run(
    target: Target, source: str, file: Path, scope: dict[str, Any], *, dry_run: bool, extract: bool | None, quiet: bool
) -> ImportReport:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, disable=quiet, transient=True) as bar:
        task = bar.add_task(f"{'checking' if dry_run else 'importing'} {file.name}", total=None)
        return import_file(
            target,
            source,
            file,
            scope=scope,
            dry_run=dry_run,
            extract=extract,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )


def _show(report: ImportReport) -> None:
    verb = "would write" if report.dry_run else "wrote"
    out.print(
        f"{report.source} {report.path}: {report.turns} turns read, {report.episodes} episodes; "
        f"{verb} {report.created}, {report.existing} stored already, {len(report.refused)} refused",
        highlight=False,
        soft_wrap=True,  # one line each, however narrow the terminal (or none)
    )
    for reason, count in sorted(report.skipped.items()):
        out.print(f"  skipped {count}: {reason}", highlight=False, soft_wrap=True)
    for kind, count in sorted(report.redacted.items()):
        out.print(f"  redacted {kind} in {count} turns", highlight=False, soft_wrap=True)
    for refused in report.refused[:10]:
        out.print(f"  refused: {refused}", highlight=False, soft_wrap=True)
    if report.extraction_jobs:
        out.print(
            f"  extraction queued: {len(report.extraction_jobs)} jobs (engram assist jobs)",
            highlight=False,
            soft_wrap=True,
        )


for _name in SOURCES:
    import_app.command(_name, help=HELP[_name] + _AFTER)(_source_command(_name))
