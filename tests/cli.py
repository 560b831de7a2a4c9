"""``engram`` run in the test's own process, without a Python start and a CLI import per command (2 s
of CPU each here). Tests about the process itself (signals, a broken install, the script on PATH)
still start one.

``engram(...)`` goes through the installed script's entry point (:func:`main`: its messages and exit
codes) and answers in subprocess's shape; ``invoke(...)`` is typer's test runner on the command tree
built once (the runner rebuilds it from the app on every call: a tenth of a second each).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from unittest import mock

import typer.testing
from rich.console import Console
from typer.testing import CliRunner, Result

from engramdb.cli.entry import main
from engramdb.cli.main import app, command


def engram(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``engram ARGS`` with ``env`` as the whole environment and ``cwd`` as the working folder (as
    ``subprocess.run(env=..., cwd=...)``)."""
    code = 0
    whole = _whole(env)
    columns = (whole or os.environ).get("COLUMNS")
    with (
        CliRunner().isolation(env=whole) as (out, err, _),
        contextlib.chdir(cwd or Path.cwd()),
        _consoles_sized(int(columns) if columns and columns.isdigit() else None),
    ):
        try:
            main(args)
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        sys.stdout.flush()  # print() writes through a buffer the runner reads below it
        sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return subprocess.CompletedProcess(["engram", *args], code, stdout, stderr)


def invoke(args: list[str], env: Mapping[str, str | None] | None = None) -> Result:
    """``CliRunner().invoke(app, args, env=env)``, on the command tree built once."""
    with mock.patch.object(typer.testing, "_get_command", lambda _: command()):
        return CliRunner().invoke(app, args, env=env)


@contextlib.contextmanager
def _consoles_sized(columns: int | None) -> Iterator[None]:
    """The CLI's consoles read ``COLUMNS`` when their module is imported, in a process's start; this
    process started before the command's environment: size them as the command's own process would."""
    consoles = [
        value
        for name, module in list(sys.modules.items())
        if name.startswith("engramdb.cli")
        for value in vars(module).values()
        if isinstance(value, Console)
    ]
    before = [console.width for console in consoles]
    for console in consoles:
        console.width = columns or 80  # 80: rich's width with no terminal and no COLUMNS
    try:
        yield
    finally:
        for console, width in zip(consoles, before, strict=True):
            console.width = width


def _whole(env: Mapping[str, str] | None) -> dict[str, str | None] | None:
    """CliRunner adds to the environment; a subprocess's ``env`` replaces it: unset what is not named."""
    if env is None:
        return None
    return {name: None for name in os.environ if name not in env} | dict(env)
