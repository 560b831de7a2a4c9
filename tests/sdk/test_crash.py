"""The outbox survives SIGKILL: 1,000 episodes written while the server is down, the host killed,
killed again mid-delivery, restarted: the server ends with each episode exactly once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from engramdb.contract.canonical import event_id
from engramdb.core import auth
from engramdb.sdk.outbox.store import FILE_NAME
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import scope_fields
from tests.sdk.crash_host import SESSION, turn
from tests.sdk.helpers import free_port, stored_episodes, wait_until

COUNT = 1_000
ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def _process(args: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)
        assert proc.stdout is not None
        proc.stdout.close()


def _host(*args: str) -> list[str]:
    return [sys.executable, "-m", "tests.sdk.crash_host", *args]


def _expect(proc: subprocess.Popen[str], line: str, timeout: float = 60) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        got = proc.stdout.readline()
        seen.append(got)
        if got.strip() == line:
            return
        if not got and proc.poll() is not None:
            break
    raise AssertionError(f"never saw {line!r}: {''.join(seen)[-2000:]}")


def _pending(profile: Path) -> int:
    with sqlite3.connect(profile / FILE_NAME) as db:
        return int(db.execute("SELECT count(*) FROM pending").fetchone()[0])


def test_sigkill_while_the_server_is_down_and_again_mid_delivery_loses_and_duplicates_nothing(
    tmp_path: Path,
) -> None:
    home, profile, port = tmp_path / "home", tmp_path / "profile", free_port()
    store = SQLiteStore(home)
    key, _ = auth.create_key(store, tenant="default", role="agent", grant=scope_fields())
    store.close()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDER": "hashing", "PYTHONPATH": str(ROOT)}

    # 1. The server is down: the host queues 1,000 turns and is killed outright.
    with _process(_host("write", str(profile), url, key, str(COUNT)), env) as writer:
        _expect(writer, f"appended {COUNT}")
        writer.send_signal(signal.SIGKILL)
    assert _pending(profile) == COUNT

    serve = [sys.executable, "-m", "engramdb.cli", "serve", "--port", str(port)]
    with _process(serve, env) as server:
        assert wait_until(lambda: _healthy(url), timeout=60), "the server did not start"
        # 2. Restarted with the server up, the host replays; it is killed again mid-delivery.
        with _process(_host("deliver", str(profile), url, key), env) as host:
            assert wait_until(lambda: len(stored_episodes(home, "default")) >= 200, timeout=60, step=0.005)
            host.send_signal(signal.SIGKILL)
        midway = len(stored_episodes(home, "default"))
        assert midway < COUNT, "delivery finished before the kill; the test proved nothing"
        # 3. A third start delivers the rest.
        with _process(_host("deliver", str(profile), url, key), env) as host:
            _expect(host, "drained")
            assert host.wait(30) == 0
        server.send_signal(signal.SIGINT)
        server.wait(30)

    expected = {event_id(runtime="custom", agent_id="coder", profile_id="default", external_session_id=SESSION,
                         turn_index=i, user_text=turn(i)[0], assistant_text=turn(i)[1]) for i in range(COUNT)}  # fmt: skip
    stored = Counter(stored_episodes(home, "default"))
    assert len(stored) == COUNT and set(stored) == expected
    assert max(stored.values()) == 1  # exactly once each
    assert _pending(profile) == 0


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
