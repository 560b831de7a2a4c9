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
from collections.abc import Mapping
from pathlib import Path
from unittest import mock

import typer.testing
from typer.testing import CliRunner, Result

from engramdb.cli.main import app, command, main


def engram(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``engram ARGS`` with ``env`` as the whole environment and ``cwd`` as the working folder (as
    ``subprocess.run(env=..., cwd=...)``)."""
    code = 0
    with CliRunner().isolation(env=_whole(env)) as (out, err, _), contextlib.chdir(cwd or Path.cwd()):
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


def _whole(env: Mapping[str, str] | None) -> dict[str, str | None] | None:
    """CliRunner adds to the environment; a subprocess's ``env`` replaces it: unset what is not named."""
    if env is None:
        return None
    return {name: None for name in os.environ if name not in env} | dict(env)
