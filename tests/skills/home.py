"""``engram`` run as a user whose home is a temporary folder: the runtimes' own variables left out
(in the test's process: tests/cli.py)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from tests.cli import engram as in_process

MOVED_BY = {"hermes": "HERMES_HOME", "openclaw": "OPENCLAW_STATE_DIR"}  # the variables that move a runtime's home


def engram(
    home: Path, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``engram`` with ``home`` as the user's home, none of the runtimes' variables inherited."""
    inherited = {k: v for k, v in os.environ.items() if k not in (*MOVED_BY.values(), "CODEX_HOME")}
    return in_process(*args, cwd=cwd or home, env={**inherited, "HOME": str(home), "COLUMNS": "200", **(env or {})})
