"""A real ``engram serve`` in its own process on a fixed 127.0.0.1 port: started, killed, started again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import httpx

from engramdb_bench.machine import free_port


class ServerProcess:
    """``engram serve`` over one data folder (or PostgreSQL schema); the port stays the same across
    restarts, so clients keep their URL. Its output goes to ``log`` (appended, restart after restart)."""

    def __init__(self, env: dict[str, str], log: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **env}
        self.log_path = log
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._log: IO[bytes] | None = None

    def start(self, ready_timeout: float = 120.0) -> float:
        """Start it and wait until ``/healthz`` answers; return the seconds that took."""
        assert self.process is None, "already running"
        started = time.perf_counter()
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "engramdb.cli", "serve", "--port", str(self.port)],
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.starts += 1
        with httpx.Client(base_url=self.url, timeout=2.0) as http:
            while time.perf_counter() - started < ready_timeout:
                if self.process.poll() is not None:
                    raise RuntimeError(f"engram serve exited with {self.process.returncode}; see {self.log_path}")
                try:
                    if http.get("/healthz").status_code == 200:
                        return time.perf_counter() - started
                except httpx.TransportError:
                    pass  # not listening yet
                time.sleep(0.02)
        self.stop(signal.SIGKILL)
        raise TimeoutError(f"engram serve did not answer /healthz in {ready_timeout} s; see {self.log_path}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> None:
        """Send ``sig`` (SIGKILL: no chance to clean up) and wait for the process to end."""
        if self.process is None:
            return
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout)
        self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None
