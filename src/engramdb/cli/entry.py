"""The ``engram`` command's entry point: the groups and commands that stand alone run without the rest of the tree.

``engram hook prompt`` runs before every prompt Claude Code sends, ``engram outbox …`` from a host's
scripts, ``engram mcp`` whenever an MCP client starts it. Importing the whole tree
(:mod:`engramdb.cli.main`: every operation's commands, the importers, the plugins) costs more than
the hook itself, so a group named in ``STANDALONE`` or a command in ``COMMANDS`` is imported and
built alone, as the whole tree builds it. Everything else runs on the whole tree.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer
import typer.core
import typer.main
from pydantic import ValidationError
from typer.models import TyperInfo

from engramdb import __version__
from engramdb.errors import EngramError

# Group -> "module:attribute" of its typer app. The whole tree adds these after the plugins' groups
# (main.build), so no plugin can replace them there: building one alone runs what the tree would.
STANDALONE = {
    "outbox": "engramdb.cli.outbox:outbox_app",
    "hook": "engramdb.cli.hooks:hook_app",
    "hermes": "engramdb.cli.hermes:hermes_app",
    "skills": "engramdb.cli.skills:skills_app",
}
# Top-level command -> "module:function": the server and the MCP server, which tests, supervisors and
# MCP clients start. The whole tree adds them before the plugins' groups, so a plugin group of the
# same name would replace one there: then it runs on the whole tree (``_replaced``).
COMMANDS = {"serve": "engramdb.cli.operator:serve", "mcp": "engramdb.cli.operator:mcp"}
PLUGINS = "engramdb.cli"  # the entry-point group of other distributions' groups (cli/extras.py)


def _version(value: bool) -> None:
    if value:
        print(f"engram {__version__}")
        raise typer.Exit()


def root() -> typer.Typer:
    """The ``engram`` application with no commands yet: main.build adds them."""
    app = typer.Typer(
        help="EngramDB: long-term memory for LLM agents.", no_args_is_help=True, pretty_exceptions_enable=False
    )

    @app.callback()
    def _root(
        version: Annotated[
            bool, typer.Option("--version", callback=_version, is_eager=True, help="print the version and exit")
        ] = False,
    ) -> None:
        """EngramDB: long-term memory for LLM agents."""
        # Runs on the whole tree only: `engram GROUP …` builds its group alone (main.tree_for), without this.

    return app


def group_tree(app: typer.Typer, info: TyperInfo) -> typer.core.TyperGroup:
    """The command tree of one of ``app``'s groups, built as ``app``'s whole tree builds it."""
    return typer.main.get_group_from_info(
        info,
        pretty_exceptions_short=app.pretty_exceptions_short,
        suggest_commands=app.suggest_commands,
        rich_markup_mode=app.rich_markup_mode,
    )


def _load(spec: str) -> Any:
    """The attribute a ``"module:attribute"`` spec names, importing only its module."""
    module, attribute = spec.split(":")
    return getattr(importlib.import_module(module), attribute)


def standalone_app(name: str) -> typer.Typer:
    """The typer app of a ``STANDALONE`` group, importing only its module."""
    app = _load(STANDALONE[name])
    assert isinstance(app, typer.Typer), STANDALONE[name]
    return app


def standalone(name: str) -> typer.core.TyperGroup:
    """The tree of a ``STANDALONE`` group, built as the whole tree builds it."""
    return group_tree(root(), TyperInfo(standalone_app(name), name=name))


def command_function(name: str) -> Callable[..., Any]:
    """The function of a ``COMMANDS`` command, importing only its module."""
    function: Callable[..., Any] = _load(COMMANDS[name])
    return function


def command_tree(name: str) -> typer.core.TyperGroup:
    """The root with only the ``COMMANDS`` command ``name``: ``engram serve …`` runs as on the whole tree."""
    app = root()
    app.command(name)(command_function(name))
    tree = typer.main.get_command(app)
    assert isinstance(tree, typer.core.TyperGroup)  # a callback and a command: a group
    return tree


def _replaced(name: str) -> bool:
    from importlib.metadata import entry_points

    return bool(entry_points(group=PLUGINS, name=name))


def run(tree: typer.core.TyperGroup, name: str, args: list[str] | None) -> None:
    """Run ``tree`` as ``name``, turning EngramError and invalid input into a message and exit code 1."""
    try:
        tree.main(args=args, prog_name=name)
    except EngramError as error:
        _print_error(error.message)
        sys.exit(1)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "input"
        _print_error(f"{field}: {first['msg']}")
        sys.exit(1)


def _print_error(message: str) -> None:
    from rich.console import Console
    from rich.text import Text

    # Messages stay one line (scripts grep them), in plain text: rich would take "[a-f0-9]" for markup.
    Console(stderr=True, soft_wrap=True).print(Text.assemble(("error:", "red"), " ", message), highlight=False)


def main(args: Sequence[str] | None = None) -> None:
    """Entry point: a standalone group alone, anything else on the whole tree (main.main)."""
    words = sys.argv[1:] if args is None else list(args)
    # Windows shells leave wildcards to click, which expands sys.argv only when it reads it itself.
    first = words[0] if words and not (args is None and os.name == "nt") else None
    if first in STANDALONE:
        # No tune_process here: it limits the BLAS threads of numpy, which these groups never load.
        run(standalone(first), f"engram {first}", words[1:])
        return
    if first in COMMANDS and not _replaced(first):
        run(command_tree(first), "engram", words)
        return
    from engramdb.cli import main as whole

    whole.main(args)
