"""The ``kill -9`` loop: a real ``engram serve`` killed with SIGKILL mid-write, ``kills`` times.

Writers (engramdb_bench.faults.writers) keep sending episodes, batches of ten, and facts and
corrections to three single-valued slots; each kill comes a random fraction of a second after the
server answered its first health check, so requests are in flight when it lands, and the server is
started again at once on the same data. After the loop the writers finish their last write and
stop, and the run reads everything back twice (what the server serves the writers' key, and the
tenant's raw rows from the store) and verifies the audit chain.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from engramdb.core import auth
from engramdb.storage.registry import open_store
from engramdb_bench.faults import check
from engramdb_bench.faults.server import ServerProcess
from engramdb_bench.faults.writers import SCOPE, SLOTS, BatchWriter, EpisodeWriter, Ledger, SlotWriter, Write
from engramdb_bench.machine import load_average

TENANT = "default"  # the tenant local CLI commands (engram audit verify) work on


@dataclass(frozen=True)
class KillLoopConfig:
    kills: int = 20
    window: tuple[float, float] = (0.1, 0.5)  # seconds of writing between a server's start and its kill
    database_url: str | None = None  # None: SQLite in the run's folder
    pg_schema: str = "engram"
    sqlite_synchronous: str = "NORMAL"
    seed: int = 7


@dataclass
class KillLoopRun:
    """A finished run: the JSON result, and what it was checked against (for the tests' controls)."""

    result: dict[str, Any]
    writes: list[Write]
    served_episodes: list[check.Row]
    served_facts: list[check.Row]
    stored_episodes: list[check.Row]
    stored_facts: list[check.Row]
    env: dict[str, str]


def run(config: KillLoopConfig, folder: Path, progress: Callable[[str], None] = print) -> KillLoopRun:
    """Run the loop in ``folder`` (data, server log); return the result and what was read back."""
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    url = config.database_url or f"sqlite:///{home.resolve()}"
    options: dict[str, object] = {"schema": config.pg_schema} if config.database_url else {}
    env = _server_env(config, home)
    agent, admin = _keys(url, options)
    server = ServerProcess(env, folder / "server.log")
    ledger, stop, hard_stop = Ledger(), threading.Event(), threading.Event()
    rng = random.Random(config.seed)
    load_before = load_average()
    started = time.perf_counter()
    restarts = [server.start()]
    writers = [
        EpisodeWriter(server.url, agent, ledger, stop, hard_stop),
        BatchWriter(server.url, agent, ledger, stop, hard_stop),
        *[SlotWriter(slot, server.url, agent, ledger, stop, hard_stop) for slot in SLOTS],
    ]
    try:
        for writer in writers:
            writer.start()
        restarts += _kill_and_restart(server, config, rng, ledger, progress)
        _until_each_slot_is_corrected(ledger)
        time.sleep(config.window[1])  # the writers' in-doubt writes go through on the last server
        stop.set()
        _join(writers, hard_stop)
        failures = [f"{w.name}: {type(w.failure).__name__}: {w.failure}" for w in writers if w.failure]
        with _client(server.url, agent) as http:
            served_episodes, served_facts, current = check.served(http, SLOTS)
        with _client(server.url, admin) as http:
            audit = check.audit_verdict(http)
    finally:
        stop.set()
        hard_stop.set()
        server.stop(signal.SIGTERM)
    stored_episodes, stored_facts = check.stored(url, TENANT, **options)
    result = _result(
        config,
        ledger,
        failures,
        audit,
        restarts,
        served=(served_episodes, served_facts, current),
        stored=(stored_episodes, stored_facts),
    )
    result |= {
        "wallSeconds": round(time.perf_counter() - started, 1),
        "loadAverage": {"before": load_before, "after": load_average()},
    }
    return KillLoopRun(result, list(ledger.writes), served_episodes, served_facts, stored_episodes, stored_facts, env)


def _server_env(config: KillLoopConfig, home: Path) -> dict[str, str]:
    env = {
        "ENGRAM_HOME": str(home),
        "ENGRAM_EMBEDDER": "hashing",
        "ENGRAM_EMBED_POLL_SECONDS": "0.05",
        "ENGRAM_SQLITE_SYNCHRONOUS": config.sqlite_synchronous,
    }
    if config.database_url:
        env |= {"ENGRAM_DATABASE_URL": config.database_url, "ENGRAM_PG_SCHEMA": config.pg_schema}
    return env


def _until_each_slot_is_corrected(ledger: Ledger, seconds: float = 120.0) -> None:
    """Let the writers go on until each slot was both replaced and corrected (its third step): a
    short loop on a slow machine could end before, and the run would check one kind of supersession."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with ledger.lock:
            corrected = {w.slot for w in ledger.writes if w.kind == "correction"}
        if corrected >= set(SLOTS):
            return
        time.sleep(0.05)


def _kill_and_restart(
    server: ServerProcess, config: KillLoopConfig, rng: random.Random, ledger: Ledger, progress: Callable[[str], None]
) -> list[float]:
    """Kill the server with SIGKILL ``kills`` times, each a random moment into its writing; return each
    restart's time to its first health check."""
    restarts: list[float] = []
    for kill in range(1, config.kills + 1):
        time.sleep(rng.uniform(*config.window))
        server.stop(signal.SIGKILL)
        restarts.append(server.start())
        if kill % 5 == 0 or kill == config.kills:
            progress(
                f"  kill {kill}/{config.kills}: {len(ledger.writes)} writes acknowledged, "
                f"{ledger.counts['interrupted_requests']} requests cut off so far"
            )
    return restarts


def expected(writes: list[Write]) -> tuple[dict[str, str], dict[str, str], dict[tuple[str, str], str]]:
    """Acknowledged episodes and facts (id -> content), and each slot's last acknowledged fact."""
    episodes = {w.id: w.text for w in writes if w.kind == "episode"}
    facts = {w.id: w.text for w in writes if w.kind != "episode"}
    last: dict[tuple[str, str], Write] = {}
    for w in writes:
        if w.slot is not None and (w.slot not in last or w.step > last[w.slot].step):
            last[w.slot] = w
    return episodes, facts, {slot: w.id for slot, w in last.items()}


def _result(
    config: KillLoopConfig,
    ledger: Ledger,
    failures: list[str],
    audit: dict[str, Any],
    restarts: list[float],
    *,
    served: tuple[list[check.Row], ...],
    stored: tuple[list[check.Row], ...],
) -> dict[str, Any]:
    episodes, facts, last = expected(ledger.writes)
    served_episodes, served_facts, current = served
    stored_episodes, stored_facts = stored
    verdicts = {
        "servedEpisodes": check.compare(episodes, served_episodes),
        "servedFacts": check.compare(facts, served_facts),
        "storedEpisodes": check.compare(episodes, stored_episodes),
        "storedFacts": check.compare(facts, stored_facts),
    }
    slots = (
        check.slot_problems(last, served_facts)
        + check.slot_problems(last, stored_facts)
        + check.slot_problems(last, current)
    )
    ok = (
        all(v.ok for v in verdicts.values())
        and not slots
        and not failures
        and not ledger.unexpected
        and bool(audit.get("verified"))
        and len(last) == len(SLOTS)
    )
    return {
        "backend": "postgresql" if config.database_url else "sqlite",
        "sqliteSynchronous": config.sqlite_synchronous if not config.database_url else None,
        "kills": len(restarts) - 1,
        "serverStartSeconds": _spread(restarts),
        "acknowledged": {
            k.removeprefix("acknowledged_"): v for k, v in ledger.counts.items() if k.startswith("acknowledged_")
        },
        "interruptedRequests": ledger.counts["interrupted_requests"],
        "ackLostButStored": ledger.counts["ack_lost_but_stored"],
        "refusedConnections": ledger.counts["refused_connections"],
        "answers5xx": {k: v for k, v in ledger.counts.items() if k.startswith("answered_")},
        "lost": sum(len(v.missing) for v in verdicts.values()),
        "duplicates": sum(len(v.duplicate_ids) + len(v.duplicate_contents) for v in verdicts.values()),
        "checks": {name: v.as_json() for name, v in verdicts.items()},
        "slotProblems": slots,
        "writerFailures": failures,
        "refusedWrites": ledger.unexpected[:20],
        "audit": audit,
        "ok": ok,
    }


def _keys(url: str, options: dict[str, object]) -> tuple[str, str]:
    store = open_store(url, **options)
    try:
        agent, _ = auth.create_key(store, tenant=TENANT, role="agent", grant=dict(SCOPE), create_tenant=True)
        admin, _ = auth.create_key(store, tenant=TENANT, role="admin", grant={})
    finally:
        store.close()
    return agent, admin


def _client(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60.0)


def _join(writers: list[Any], hard_stop: threading.Event, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    for writer in writers:
        writer.join(max(0.0, deadline - time.monotonic()))
    stuck = [w for w in writers if w.is_alive()]
    if stuck:
        hard_stop.set()  # a write still unacknowledged after two minutes: reported as a failure
        for writer in stuck:
            writer.join(30)
            writer.failure = writer.failure or TimeoutError("its last write was never acknowledged")


def _spread(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {"min": round(ordered[0], 2), "median": round(ordered[len(ordered) // 2], 2), "max": round(ordered[-1], 2)}
