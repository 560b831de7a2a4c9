"""A group named first runs on a tree of its own (``tree_for`` in cli/main.py): for the same words it
prints what the whole tree prints and exits with the same code."""

from __future__ import annotations

from unittest import mock

import pytest
import typer.core
import typer.testing
from typer.testing import CliRunner

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
