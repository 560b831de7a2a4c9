"""What a measurement depends on: the machine, the library versions and the source commit."""

from __future__ import annotations

import importlib
import os
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

import engramdb

_THREAD_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# A timed EngramDB server keeps no query vectors: a benchmark asks its questions again (another pass,
# a load's rates), and a kept vector would spare EngramDB the embedding its peers pay for each time.
NO_QUERY_CACHE = {"ENGRAM_QUERY_CACHE_SIZE": "0"}


def machine_info() -> dict[str, Any]:
    """Return what the numbers depend on: CPUs, Python, platform, library versions."""
    info: dict[str, Any] = {
        "cpuCount": os.cpu_count(),
        "cpusUsable": _usable_cpus(),
        "cpuModel": _cpu_model(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "numpy": np.__version__,
        "engramdb": engramdb.__version__,
        "threadEnv": {k: os.environ[k] for k in _THREAD_ENV if k in os.environ},
    }
    onnxruntime = _module_version("onnxruntime")
    if onnxruntime is not None:
        info["onnxruntime"] = onnxruntime
    return info


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        return platform.processor()
    return ""


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 0


def _module_version(name: str) -> str | None:
    """Return an optional library's ``__version__``, or None when it is not installed."""
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    version = getattr(module, "__version__", None)
    return None if version is None else str(version)


def load_average() -> list[float] | None:
    """Return the 1, 5 and 15 minute load averages (other work on the machine skews latency)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def source_info() -> dict[str, Any] | None:
    """Return the git commit and uncommitted files under ``src``, if the package is a checkout."""
    root = Path(engramdb.__file__).resolve().parents[2]
    try:
        commit = _git(["-C", str(root), "rev-parse", "HEAD"], check=True).stdout.strip()
        status = _git(["-C", str(root), "status", "--porcelain", "--", "src"], check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "uncommitted": [line[3:] for line in status.splitlines()]}


def git_commit() -> str | None:
    """Return the checkout's commit, with ``+dirty`` when a tracked file is modified, or None."""
    # The checkout of the engramdb measured: the harness itself may be installed apart from it.
    here = Path(engramdb.__file__).resolve().parent
    try:
        done = _git(["rev-parse", "HEAD"], cwd=here, timeout=5)
        dirty = _git(["status", "--porcelain", "--untracked-files=no"], cwd=here, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _git(
    args: list[str], *, check: bool = False, cwd: Path | None = None, timeout: float = 10
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], capture_output=True, text=True, timeout=timeout, check=check, cwd=cwd)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now (for a benchmark's own server)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
