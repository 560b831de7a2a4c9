"""Debian's Chromium for the browser tests, installed by the first test that needs it.

The README's test command must work on a fresh machine of this kind, where Chromium is not yet
installed: the first browser test installs Debian's package (as ``.ci/run`` does before the suite),
once per machine, under a file lock so that the suite's workers do not run apt at the same time.
Never ``playwright install``: its download is blocked here.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
_LOCK = Path(tempfile.gettempdir()) / "engramdb-tests-chromium.lock"
_APT = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
_STEP_SECONDS = 600  # each apt step's limit
INSTALL_SECONDS = 3 * _STEP_SECONDS  # a browser test's limit while Chromium is missing (conftest.py)


def chromium_missing() -> bool:
    """Whether Debian's Chromium is not installed yet."""
    return shutil.which(CHROMIUM) is None


def ensure_chromium() -> str:
    """The path of Debian's Chromium, installing the package first where it is missing."""
    if not chromium_missing():
        return CHROMIUM
    with _LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be installing it: wait, then look again
        if chromium_missing():
            _install()
    assert not chromium_missing(), f"{CHROMIUM} is still missing after apt-get install chromium"
    return CHROMIUM


def _install() -> None:
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise AssertionError(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(command, env=_APT, capture_output=True, text=True, timeout=_STEP_SECONDS, check=False)
        assert done.returncode == 0, f"{' '.join(command)} failed: {done.stderr.strip()[-2000:]}"
