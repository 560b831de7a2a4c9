"""A group named first runs on a tree of its own (``tree_for`` in cli/main.py), and a standalone group
without importing the whole tree (cli/entry.py): for the same words each prints what the whole tree
prints and exits with the same code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
import typer.core
import typer.testing
from typer.testing import CliRunner

from engramdb.cli import entry
from engramdb.cli.main import app, command, tree_for

GROUPS = [str(g.name) for g in app.registered_groups]


def _answer(tree: typer.core.TyperGroup, name: str, args: list[str]) -> tuple[int, str]:
    """Exit code and output of ``tree`` run as ``name`` with ``args`` (typer's runner, given this tree)."""
    with mock.patch.object(typer.testing, "_get_command", lambda _: tree):
        result = CliRunner().invoke(app, args, prog_name=name)
    return result.exit_code, result.output


def _words(group: str) -> list[list[str]]:
    """The group alone, its help, a command it does not have, and each of its commands' help."""
    below = command().commands[group]
    commands = sorted(below.commands) if isinstance(below, typer.core.TyperGroup) else []
    return [[group], [group, "--help"], [group, "no-such-command"], *([group, c, "--help"] for c in commands)]


@pytest.mark.parametrize("group", GROUPS)
def test_a_group_run_alone_answers_as_the_whole_tree(group: str) -> None:
    for args in _words(group):
        tree, name, rest = tree_for(args)
        assert _answer(tree, name, rest) == _answer(command(), "engram", args), args


def test_every_group_runs_alone_and_everything_else_on_the_whole_tree() -> None:
    # The positive control of the test above: for every group it compares two different trees.
    assert all(tree_for([g, "--help"])[0] is not command() for g in GROUPS)
    assert {"hook", "episodes", "scopes", "models", "bench"} <= set(GROUPS)
    for args in (["recall", "tea"], ["--version"], ["--help"], []):
        tree, name, rest = tree_for(args)
        assert (tree, name, rest) == (command(), "engram", args)


@pytest.mark.parametrize("group", list(entry.STANDALONE))
def test_a_standalone_group_answers_as_the_whole_tree(group: str) -> None:
    tree = entry.standalone(group)
    assert tree is not command().commands[group]  # built on its own, not taken from the whole tree
    for args in _words(group):
        assert _answer(tree, f"engram {group}", args[1:]) == _answer(command(), "engram", args), args


# What a process has imported after running `engram GROUP --help` through the entry point.
IMPORTED = """
import io, sys, contextlib
from engramdb.cli import entry
with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):
    entry.main(sys.argv[1:])
print(sorted(m for m in ("engramdb.cli.main", "engramdb.models.operations.registry") if m in sys.modules))
"""


def _imported(*args: str) -> str:
    done = subprocess.run([sys.executable, "-c", IMPORTED, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_standalone_group_runs_without_the_whole_tree_or_the_registry() -> None:
    assert _imported("hook", "--help") == "[]"  # Claude Code's hook: the SDK, one area's operations at most
    whole = "['engramdb.cli.main', 'engramdb.models.operations.registry']"
    assert _imported("facts", "--help") == whole  # positive control: a registry group imports both


@pytest.mark.parametrize("name", list(entry.COMMANDS))
def test_a_standalone_command_answers_as_the_whole_tree(name: str) -> None:
    tree = entry.command_tree(name)
    assert list(tree.commands) == [name]  # the root with this command alone
    for args in ([name, "--help"], [name, "--no-such-option"], [name, "extra", "words"]):
        assert _answer(tree, "engram", args) == _answer(command(), "engram", args), args


def test_a_standalone_command_runs_without_the_whole_tree() -> None:
    assert _imported("serve", "--help") == "[]"
    assert _imported("export", "--help").startswith("['engramdb.cli.main'")  # positive control: not standalone


def test_a_plugin_group_named_as_a_standalone_command_runs_on_the_whole_tree(tmp_path: Path) -> None:
    """The whole tree adds the plugins' groups after serve and mcp: a plugin's `serve` replaces ours there."""
    info = tmp_path / "plugin_serve-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-serve\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[engramdb.cli]\nserve = plugin_serve:app\n", encoding="utf-8")
    code = f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n" + IMPORTED
    for args, expected in ((["serve", "--help"], "['engramdb.cli.main'"), (["mcp", "--help"], "[]")):
        done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
        assert done.stdout.strip().startswith(expected), (args, done.stdout, done.stderr)
