"""The outbox survives SIGKILL: 1,000 episodes written while the server is down, the host killed,
killed again mid-delivery, restarted: the server ends with each episode exactly once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engramdb.config import Settings
from engramdb.contract.canonical import event_id
from engramdb.core.embedding import HashingEmbedder
from engramdb.sdk.outbox.store import FILE_NAME
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.sdk.crash_host import SESSION, turn
from tests.sdk.helpers import stored_episodes, wait_until, with_nodelay

COUNT = 1_000
ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def _host(env: dict[str, str], *args: str) -> Iterator[subprocess.Popen[str]]:
    command = [sys.executable, "-m", "tests.sdk.crash_host", *args]
    proc = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)
        assert proc.stdout is not None
        proc.stdout.close()


def _expect(proc: subprocess.Popen[str], line: str) -> None:
    """Read the host's output until ``line`` (the host exits, or pytest's timeout fires, if not)."""
    assert proc.stdout is not None
    seen = []
    for got in proc.stdout:
        seen.append(got)
        if got.strip() == line:
            return
    raise AssertionError(f"the host exited without {line!r}: {''.join(seen)[-2000:]}")


def _pending(profile: Path) -> int:
    with sqlite3.connect(profile / FILE_NAME) as db:
        return int(db.execute("SELECT count(*) FROM pending").fetchone()[0])


def test_sigkill_while_the_server_is_down_and_again_mid_delivery_loses_and_duplicates_nothing(
    tmp_path: Path,
) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing", embed_poll_seconds=0.05)
    profile = tmp_path / "profile"
    # Bound but not listening: the server's address refuses connections until start().
    live = with_nodelay(LiveServer(settings, SQLiteStore(settings.home), HashingEmbedder()))
    key = live.key(tenant="default")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    # 1. The server is down: the host queues 1,000 turns and is killed outright.
    with _host(env, "write", str(profile), live.url, key, str(COUNT)) as writer:
        _expect(writer, f"appended {COUNT}")
        writer.send_signal(signal.SIGKILL)
    assert _pending(profile) == COUNT and stored_episodes(settings.home, "default") == []

    live.start()
    try:
        # 2. Restarted with the server up, the host replays; it is killed again mid-delivery.
        with _host(env, "deliver", str(profile), live.url, key) as host:
            assert wait_until(lambda: len(stored_episodes(settings.home, "default")) >= 200, timeout=60, step=0.005)
            host.send_signal(signal.SIGKILL)
        midway = len(stored_episodes(settings.home, "default"))
        assert midway < COUNT, "delivery finished before the kill; the test proved nothing"
        # 3. A third start delivers the rest and exits cleanly.
        with _host(env, "deliver", str(profile), live.url, key) as host:
            _expect(host, "drained")
            assert host.wait(30) == 0
    finally:
        live.stop()

    expected = {
        event_id(
            runtime="custom",
            agent_id="coder",
            profile_id="default",
            external_session_id=SESSION,
            turn_index=i,
            user_text=turn(i)[0],
            assistant_text=turn(i)[1],
        )
        for i in range(COUNT)
    }
    stored = Counter(stored_episodes(settings.home, "default"))
    assert set(stored) == expected and len(stored) == COUNT
    assert max(stored.values()) == 1  # exactly once each
    assert _pending(profile) == 0
