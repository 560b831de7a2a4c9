"""``engram hook``: Claude Code's hooks (``engramdb.integrations.claude_code``)."""

from __future__ import annotations

import sys

import typer

from engramdb.integrations.claude_code import EVENTS, HookSettings, run_hook

hook_app = typer.Typer(help="Claude Code hooks: recall before a prompt, an episode after a turn.", no_args_is_help=True)


def _command(event: str) -> None:
    def handler() -> None:
        code = run_hook(event, sys.stdin, sys.stdout, HookSettings.from_env())
        if code:
            raise typer.Exit(code)

    handler.__doc__ = f"The {EVENTS[event]} hook: its JSON on stdin."
    hook_app.command(event)(handler)


for _event in EVENTS:
    _command(_event)
