"""``engram`` run in the test's own process: the installed script's entry point (:func:`main`, its
error handling and exit codes included) without a Python start and a CLI import per command (2 s of CPU
each here). Tests about the process itself (signals, exit on a broken install, the script on PATH)
still start one."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner

from engramdb.cli.main import main


def engram(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``engram ARGS`` with ``env`` as the whole environment and ``cwd`` as the working folder (as
    ``subprocess.run(env=..., cwd=...)``), answered in subprocess's shape."""
    runner = CliRunner()
    code = 0
    with runner.isolation(env=_whole(env)) as (out, err, _), contextlib.chdir(cwd or Path.cwd()):
        try:
            main(args)
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        sys.stdout.flush()  # print() writes through a buffer the runner reads below it
        sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return subprocess.CompletedProcess(["engram", *args], code, stdout, stderr)


def _whole(env: Mapping[str, str] | None) -> dict[str, str | None] | None:
    """CliRunner adds to the environment; a subprocess's ``env`` replaces it: unset what is not named."""
    if env is None:
        return None
    return {name: None for name in os.environ if name not in env} | dict(env)
