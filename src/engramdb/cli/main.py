"""The ``engram`` command line: every operation of the server, plus the operator's own commands.

Operation commands (``remember``, ``recall``, ``facts …``, ``review …``, ``keys …``) are built
from the registry and run on the data folder or, with ``--url``/``--key``, against a server.
``serve``, ``mcp`` and ``export`` are the operator's, on the data folder only, as is ``import
--in``; ``import SOURCE FILE`` brings other products' conversations in (:mod:`engramdb.cli.importing`);
``skills`` shows and installs the skills that teach agents EngramDB (:mod:`engramdb.skills`).
``bench`` and ``eval`` come from the harness (engramdb-bench, the ``bench`` extra), found through
its entry points (:mod:`engramdb.cli.extras`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from functools import cache
from importlib.metadata import EntryPoint

import typer
import typer.core
import typer.main

from engramdb.cli import entry, extras, maintenance, operator
from engramdb.cli.commands import command_for
from engramdb.cli.importing import import_app
from engramdb.config import tune_process
from engramdb.models.operations import OPERATIONS

GROUPS = {
    "episodes": "Episodes: write, get and list a scope's turns.",
    "facts": "Facts: get, list, correct, retract, mark, restore, delete and their history.",
    "tombstones": "Values refused in a scope, and lifting them.",
    "scopes": "The scopes of the tenant that hold memories.",
    "review": "The review queue: facts awaiting a person.",
    "audit": "Inspect and verify the audit log.",
    "policy": "The tenant's trust and lifecycle policy.",
    "keys": "Create, list and revoke API keys.",
    "records": "The knowledge plane: records, relationships, where-queries.",
    "participants": "One participant's data: export it (JSON lines); `engram forget` erases it.",
    "jobs": "The server's background jobs (aging, usage), and running the aging sweep now.",
    "assist": "Model-assisted memory: extraction and its queue, reflection, consolidation, usage (docs/assist.md).",
    "changes": "The change feed: what changed in the key's scopes, in order, from a cursor.",
    "webhooks": "Endpoints that receive the change feed, signed; their dead letters and replay.",
}


def build(extra_groups: Iterable[EntryPoint] | None = None) -> typer.Typer:
    """The ``engram`` application, with the groups other distributions register (default: the installed ones)."""
    app = entry.root()
    groups = {name: typer.Typer(help=text, no_args_is_help=True) for name, text in GROUPS.items()}
    for op in OPERATIONS:
        if op.cli is not None:
            *words, name = op.cli.command
            (groups[words[0]] if words else app).command(name)(command_for(op))
    groups["assist"].command("work")(operator.work)  # the queue's workers (engram serve starts them)
    for name, group in groups.items():
        app.add_typer(group, name=name)
    # The group's name before 0.2 (the `models` group), kept for one release: hidden, marked deprecated.
    app.add_typer(groups["assist"], name="models", hidden=True, deprecated=True)
    for name in entry.COMMANDS:  # serve and mcp (entry.py runs each alone)
        app.command(name)(entry.command_function(name))
    app.command("export")(operator.export_tenant)
    app.add_typer(import_app, name="import")
    app.command("reembed")(maintenance.reembed)
    app.command("backup")(maintenance.backup)
    app.command("restore")(maintenance.restore)
    extras.add_groups(app, extras.installed() if extra_groups is None else extra_groups)
    for name in entry.STANDALONE:  # after the plugins' groups: none of them replaces these (entry.py)
        app.add_typer(entry.standalone_app(name), name=name)
    return app


app = build()


@cache
def command() -> typer.core.TyperGroup:
    """The click command tree of ``app``, built once: typer rebuilds it on every ``app()`` (a tenth of a
    second of signatures and type hints for ~90 commands), which tests running many commands in one
    process pay each time."""
    built = typer.main.get_command(app)
    assert isinstance(built, typer.core.TyperGroup)  # the app has groups: its command is one
    return built


def tree_for(args: Sequence[str]) -> tuple[typer.core.TyperGroup, str, list[str]]:
    """The command tree that runs ``args``, the name it runs under, and the arguments it is given.

    A group's command (``engram facts list``) needs only its group: building the whole tree is a
    tenth of a second of signatures and type hints for ~120 commands. So a group named first is
    built alone, as the whole tree builds it, and runs as ``engram GROUP``; anything else (a
    top-level command, an option, nothing) runs on the whole tree.
    """
    # The last group of a name wins, as in the whole tree (a plugin's group may reuse a name).
    info = next((g for g in reversed(app.registered_groups) if args and g.name == args[0]), None)
    if info is None:
        return command(), "engram", list(args)
    group = entry.group_tree(app, info)
    return group, f"engram {args[0]}", list(args[1:])


def main(args: Sequence[str] | None = None) -> None:
    """Run ``args`` on the whole tree, or on the group they name: what ``engram`` runs (entry.py) for
    anything but a standalone group."""
    tune_process()
    if args is None and os.name == "nt":  # Windows shells leave wildcards to click, which expands sys.argv only
        tree, name, rest = command(), "engram", None
    else:
        tree, name, rest = tree_for(sys.argv[1:] if args is None else args)
    entry.run(tree, name, rest)
