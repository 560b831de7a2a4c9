"""For the traces tests: ``engram serve`` in a process of its own, started with the standard
``OTEL_*`` variables, and an agent host in another process that traces with OpenTelemetry's SDK.

Both export to the test's OTLP receiver (tests/otlp.py). Each is a process because a tracer
provider is set once per process: the test's own workers stay untraced.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from engramdb.core import auth
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import scope_fields

ROOT = Path(__file__).resolve().parents[2]
HOST_GRANT = {"agentId": "coder", "profileId": "default"}  # a host names the participant (userId)
# Spans leave in batches: every 50 ms here, not every 5 s.
QUICK = {"OTEL_BSP_SCHEDULE_DELAY": "50"}


def otel_env(receiver_url: str, service: str, **extra: str) -> dict[str, str]:
    """The environment of a process that traces to ``receiver_url`` as ``service``."""
    plain = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {**plain, **QUICK, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver_url, "OTEL_SERVICE_NAME": service, **extra}


class ServeProcess:
    """``engram serve`` on a fresh data folder, with an agent, a host, a reviewer and an admin key
    (``command``: other arguments to Python that end in serving)."""

    def __init__(self, home: Path, env: dict[str, str], command: list[str] | None = None) -> None:
        store = SQLiteStore(home)
        self.keys = {
            role: auth.create_key(store, tenant="t1", role=role, grant=grant, create_tenant=True)[0]
            for role, grant in (("agent", scope_fields()), ("host", HOST_GRANT), ("reviewer", {}), ("admin", {}))
        }
        store.close()
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        own = {"ENGRAM_HOME": str(home), "ENGRAM_PORT": str(port)}
        self._process = subprocess.Popen(
            [sys.executable, *(command or ["-m", "engramdb.cli", "serve"])],
            env={"ENGRAM_EMBEDDER": "hashing", "ENGRAM_EMBED_POLL_SECONDS": "0.05", **env, **own},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output = ""
        self._wait_until_up()

    def client(self, role: str = "agent", **headers: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.keys[role]}", **headers}, timeout=30
        )

    def stop(self) -> str:
        """Stop the server (SIGTERM: the spans still queued are exported) and return what it printed."""
        if self._process.poll() is None:
            self._process.terminate()
            self.output = self._process.communicate(timeout=60)[0]
        return self.output

    def log_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.output.splitlines() if line.startswith("{")]

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self._process.poll() is None, self.stop()
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError(f"the server did not come up: {self.stop()[-2000:]}")


def run_agent(env: dict[str, str], url: str, key: str, scenario: str, **args: str) -> dict[str, str]:
    """Run tests/surfaces/traced_agent.py's ``scenario`` as an agent host process; return what it
    printed last (its turn span's ids)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.surfaces.traced_agent", url, key, scenario, json.dumps(args)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
