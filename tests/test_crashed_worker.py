"""The suite's own pytest settings (pyproject.toml) on a worker that crashes mid-run: the run ends
failed, naming the test that crashed, instead of hanging with a replacement worker (as a segfault in
a server's teardown once made it, until CI's time limit)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULE = """
import os, signal, time

def test_first():
    time.sleep(0.3)  # the other workers are still busy when the crash comes

def test_crashes():
    if {crash}:
        os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(0.3)

def test_last():
    time.sleep(0.3)
"""


def _run(folder: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(folder)]
    return subprocess.run([*command, str(folder)], capture_output=True, text=True, timeout=90, cwd=folder)


@pytest.mark.parametrize("crash", [True, False])
def test_a_crashed_worker_fails_the_run_at_once_naming_its_test(tmp_path: Path, crash: bool) -> None:
    for name in "abcdef":  # more modules than workers: the crashed worker's module is not the last one given out
        (tmp_path / f"test_{name}.py").write_text(MODULE.format(crash=crash and name == "b"))
    ran = _run(tmp_path)
    if crash:
        assert ran.returncode == 1, ran.stdout[-3000:]
        assert "worker 'gw" in ran.stdout and "crashed while running 'test_b.py::test_crashes'" in ran.stdout
        assert "INTERNALERROR" not in ran.stdout + ran.stderr
    else:  # the control: the same run without the crash passes every test
        assert ran.returncode == 0 and "18 passed" in ran.stdout, ran.stdout[-3000:]
