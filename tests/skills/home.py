"""``engram`` run as a user whose home is a temporary folder: the runtimes' own variables left out."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

MOVED_BY = {"hermes": "HERMES_HOME", "openclaw": "OPENCLAW_STATE_DIR"}  # the variables that move a runtime's home


def engram(
    home: Path, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``engram`` with ``home`` as the user's home, none of the runtimes' variables inherited."""
    inherited = {k: v for k, v in os.environ.items() if k not in (*MOVED_BY.values(), "CODEX_HOME")}
    return subprocess.run(
        [sys.executable, "-m", "engramdb.cli", *args],
        cwd=cwd or home,
        env={**inherited, "HOME": str(home), "COLUMNS": "200", **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
