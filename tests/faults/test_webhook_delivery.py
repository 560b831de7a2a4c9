"""Webhooks across ``kill -9``: 1,000 changes reach an endpoint exactly once and in order, though it
fails 30% of calls (half of them after applying the delivery, so the retry is an id it took
already), is down for a while (its port closed), and the real ``engram serve`` delivering to it is
killed with SIGKILL three times and started again on the same data (SQLite and PostgreSQL).

The endpoint is the receiver docs/operations.md shows (tests/changes/receiver.py reads it from the
page). One kill lands while a delivery is stuck failing: the first call after the restart must be
that same delivery, from the outbox in the store.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb.core import auth
from engramdb.storage.registry import open_store
from engramdb_bench.faults.server import ServerProcess
from engramdb_bench.faults.writers import SCOPE, episode_body, episode_id
from tests.changes.receiver import Receiver

CHANGES, BATCH, TENANT = 1000, 25, "default"
ENV = {
    "ENGRAM_EMBEDDER": "hashing",
    "ENGRAM_EMBED_POLL_SECONDS": "0.05",
    "ENGRAM_WEBHOOKS__BATCH_SIZE": "10",
    "ENGRAM_WEBHOOKS__ATTEMPTS": "100",  # nothing becomes a dead letter while the endpoint is down
    "ENGRAM_WEBHOOKS__BACKOFF_SECONDS": "0.05",
    "ENGRAM_WEBHOOKS__MAX_BACKOFF_SECONDS": "0.5",
    "ENGRAM_WEBHOOKS__POLL_SECONDS": "0.05",
    "ENGRAM_WEBHOOKS__TIMEOUT_SECONDS": "5",
}


@dataclass
class Run:
    """What a finished run saw."""

    expected: list[str]  # the episodes' ids, in the order they were written
    receiver: Receiver
    kills: int = 0
    stuck: str = ""  # the delivery failing when the second kill came
    first_after_stuck: str = ""  # the first delivery sent after that restart
    log: str = ""
    served: list[dict[str, Any]] = field(default_factory=list)  # the feed, read at the end


def _wait(done: Callable[[], bool], what: str, seconds: float = 180.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _keys(env: dict[str, str], home: Path) -> tuple[str, str]:
    url = env.get("ENGRAM_DATABASE_URL") or f"sqlite:///{home}"
    options: dict[str, Any] = {"schema": env["ENGRAM_PG_SCHEMA"]} if "ENGRAM_PG_SCHEMA" in env else {}
    store = open_store(url, **options)
    try:
        agent, _ = auth.create_key(store, tenant=TENANT, role="agent", grant=dict(SCOPE), create_tenant=True)
        admin, _ = auth.create_key(store, tenant=TENANT, role="admin", grant={})
    finally:
        store.close()
    return agent, admin


def _writer(url: str, token: str, bodies: list[dict[str, Any]], failures: list[BaseException]) -> threading.Thread:
    """Writes the episodes in batches, each sent again until acknowledged (idempotent by id)."""

    def write() -> None:
        try:
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
                for start in range(0, len(bodies), BATCH):
                    while True:
                        try:
                            if http.post(
                                "/v1/episodes/batch", json={"episodes": bodies[start : start + BATCH]}
                            ).is_success:
                                break
                        except httpx.TransportError:
                            pass  # the server is being killed or started: send it again
                        time.sleep(0.05)
                    time.sleep(0.02)
        except BaseException as error:  # reported by the test, never swallowed
            failures.append(error)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def _kill(server: ServerProcess, run: Run) -> None:
    server.stop(signal.SIGKILL)
    run.kills += 1
    server.start()


def _play(server: ServerProcess, run: Run) -> None:
    """The faults, at points spread over the deliveries."""
    receiver = run.receiver
    _wait(lambda: len(receiver.applied) >= 100, "100 changes applied")
    _kill(server, run)  # wherever the deliveries are
    _wait(lambda: len(receiver.applied) >= 300, "300 changes applied")
    receiver.fail_share = 2.0  # every call fails: a delivery is stuck, retried
    _wait(lambda: len(receiver.arrivals) >= 2 and receiver.arrivals[-1] == receiver.arrivals[-2], "a stuck delivery")
    run.stuck, calls = receiver.arrivals[-1], len(receiver.arrivals)
    _kill(server, run)
    receiver.fail_share = 0.3
    _wait(lambda: len(receiver.arrivals) > calls, "a call after the restart")
    run.first_after_stuck = receiver.arrivals[calls]
    _wait(lambda: len(receiver.applied) >= 550, "550 changes applied")
    receiver.stop()  # down: calls are refused
    time.sleep(2.0)
    receiver.start()
    _wait(lambda: len(receiver.applied) >= 750, "750 changes applied")
    _kill(server, run)


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp(f"webhooks-{request.param}")
    home = folder / "home"
    env = {**ENV, "ENGRAM_HOME": str(home)}
    if request.param == "postgres":
        env |= {
            "ENGRAM_DATABASE_URL": request.getfixturevalue("pg_url"),
            "ENGRAM_PG_SCHEMA": f"hooks_{uuid.uuid4().hex[:10]}",
        }
    agent, admin = _keys(env, home)
    bodies = [episode_body("hooks", i, f"Change number {i} for the endpoint.") for i in range(CHANGES)]
    result = Run([episode_id(b) for b in bodies], Receiver(fail_share=0.3, seed=36))
    server = ServerProcess(env, folder / "server.log")
    result.receiver.start()
    server.start()
    failures: list[BaseException] = []
    try:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {admin}"}, timeout=30) as http:
            created = http.post("/v1/webhooks", json={"url": result.receiver.url, "kinds": ["created"]}).json()
            result.receiver.secret = created["secret"]
            writer = _writer(server.url, agent, bodies, failures)
            _play(server, result)
            writer.join(120)
            _wait(lambda: len(result.receiver.applied) >= CHANGES, f"{CHANGES} changes applied")
            time.sleep(0.5)  # a duplicate would arrive now
            result.served = http.get("/v1/changes", params={"limit": 1000, "kinds": "created"}).json()["changes"]
    finally:
        server.stop(signal.SIGTERM)
        result.receiver.stop()
    assert failures == [] and not writer.is_alive()
    result.log = (folder / "server.log").read_text(errors="replace")
    return result


@pytest.mark.slow
def test_every_change_is_applied_exactly_once_in_order(run: Run) -> None:
    applied = run.receiver.applied
    assert [c["id"] for c in applied] == run.expected  # each once, in the order written
    assert [c["id"] for c in applied] == [c["id"] for c in run.served]  # what the feed says happened
    assert [c["seq"] for c in applied] == sorted({c["seq"] for c in applied})
    assert len(run.receiver.taken) == len(set(run.receiver.taken))  # no delivery applied twice


@pytest.mark.slow
def test_the_faults_happened(run: Run) -> None:
    counts = run.receiver.counts
    print(dict(counts), run.kills, run.stuck, run.first_after_stuck)
    assert run.kills == 3
    failed = counts["failed_before"] + counts["failed_after"]
    assert 0.2 < failed / counts["calls"] < 0.5 and counts["failed_after"] > 5  # ~30%, and a stuck spell
    assert counts["seen_again"] >= counts["failed_after"] > 0  # each applied-but-failed call came again, unapplied
    assert counts["refused"] == 0  # every delivery that arrived whole was signed with the endpoint's secret
    assert counts["torn"] <= run.kills  # a SIGKILL can cut the one call in flight short, no more
    assert "ConnectError" in run.log  # the endpoint was down, and the server said so
    assert run.stuck and run.first_after_stuck == run.stuck  # the stuck delivery came back from the store
