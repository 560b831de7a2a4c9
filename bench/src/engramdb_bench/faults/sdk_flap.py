"""The SDK host killed mid-stream while the server flaps.

A host process (engramdb_bench.faults.sdk_host) writes ``turns`` turns through MemorySession's
durable outbox, a few milliseconds apart. Meanwhile one thread stops the real ``engram serve`` again
and again (SIGKILL and SIGTERM in turn) and starts it on the same port, and the run kills the host
with SIGKILL ``host_kills`` times at points spread over the stream, starting it again on the same
profile folder each time. Once every turn is appended the server is left up and the host drains
its outbox. Then every turn must be on the server exactly once (by id and by content), and the
outbox must hold neither pending entries nor dead letters.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx

from engramdb.core import auth
from engramdb.sdk.outbox.store import OutboxStore
from engramdb.storage.registry import open_store
from engramdb_bench.faults import check
from engramdb_bench.faults.sdk_host import HOST, turn, turn_id
from engramdb_bench.faults.server import ServerProcess
from engramdb_bench.machine import load_average

TENANT = "default"


@dataclass(frozen=True)
class FlapConfig:
    turns: int = 300
    host_kills: int = 3
    pace: float = 0.02  # seconds between the host's turns
    up: tuple[float, float] = (0.3, 1.2)  # seconds the server stays up between stops
    down: tuple[float, float] = (0.1, 0.6)  # seconds it stays down
    min_flaps: int = 4
    seed: int = 11


@dataclass
class _Host:
    """The host process and what it has said so far (read by a thread)."""

    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    def read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.strip())

    def appended(self) -> int:
        """How many turns it has reported on disk, in this life or an earlier one."""
        last = [int(s.split()[1]) for s in self.lines if s.startswith("appended ") and s != "appended all"]
        return last[-1] + 1 if last else 0

    def said(self, line: str) -> bool:
        return line in self.lines


@dataclass
class FlapRun:
    result: dict[str, Any]
    expected: dict[str, str]
    served: list[check.Row]
    stored: list[check.Row]


def run(config: FlapConfig, folder: Path, progress: Callable[[str], None] = print) -> FlapRun:
    """Run it in ``folder`` (server data, host profile, logs); return the result and the rows read."""
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{home.resolve()}"
    server = ServerProcess(
        {"ENGRAM_HOME": str(home), "ENGRAM_EMBEDDER": "hashing", "ENGRAM_EMBED_POLL_SECONDS": "0.05"},
        folder / "server.log",
    )
    flapping = _Flapping(config, server, folder / "profile", _key(url), progress)
    load_before = load_average()
    started = time.perf_counter()
    with (folder / "host.log").open("a") as host_log:
        served = flapping.drive(host_log)
    stored, _ = check.stored(url, TENANT)
    expected = {turn_id(i): turn(i)[0] for i in range(config.turns)}
    result = flapping.result(expected, served, stored)
    result |= {
        "wallSeconds": round(time.perf_counter() - started, 1),
        "loadAverage": {"before": load_before, "after": load_average()},
    }
    return FlapRun(result, expected, served, stored)


class _Flapping:
    """One run's moving parts: the server and its flapping thread, the host processes."""

    def __init__(
        self, config: FlapConfig, server: ServerProcess, profile: Path, token: str, progress: Callable[[str], None]
    ) -> None:
        self.config, self.server, self.profile, self.token, self.progress = config, server, profile, token, progress
        self.rng = random.Random(config.seed)
        self.stop_flapping = threading.Event()
        self.flaps: list[str] = []
        self.hosts: list[_Host] = []
        self.pending_at_kill: list[int] = []

    def drive(self, host_log: IO[str]) -> list[check.Row]:
        """Kill the host at spread points while the server flaps; let the last host drain; read back."""
        self.server.start()
        flapper = threading.Thread(
            target=_flap, args=(self.server, self.config, self.rng, self.stop_flapping, self.flaps), daemon=True
        )
        try:
            flapper.start()
            marks = [self.config.turns * (k + 1) // (self.config.host_kills + 2) for k in range(self.config.host_kills)]
            for mark in marks:
                host = self._host(host_log)
                _wait(lambda h=host, m=mark: h.appended() >= m or h.process.poll() is not None, 300)  # type: ignore[misc]
                time.sleep(self.rng.uniform(0, 3 * self.config.pace))  # at times between an append and its report
                host.process.send_signal(signal.SIGKILL)
                host.process.wait(30)
                self.pending_at_kill.append(_pending(self.profile))
                self.progress(
                    f"  host killed after turn {host.appended() - 1} with {self.pending_at_kill[-1]} turns "
                    f"pending (server stopped {len(self.flaps)} times so far)"
                )
            last = self._host(host_log)
            _wait(lambda: last.said("appended all") or last.process.poll() is not None, 600)
            _wait(lambda: len(self.flaps) >= self.config.min_flaps or last.process.poll() is not None, 600)
            self.stop_flapping.set()
            flapper.join(120)
            if not self.server.running:
                self.server.start()
            _wait(lambda: last.process.poll() is not None, 600)
            headers = {"Authorization": f"Bearer {self.token}"}
            with httpx.Client(base_url=self.server.url, headers=headers, timeout=60) as http:
                return check.served(http, ())[0]
        finally:
            self.stop_flapping.set()
            for host in self.hosts:
                if host.process.poll() is None:
                    host.process.kill()
                host.process.wait(30)
                if host.reader is not None:
                    host.reader.join(10)
                if host.process.stdout is not None:
                    host.process.stdout.close()
            flapper.join(120)
            self.server.stop(signal.SIGTERM)

    def _host(self, log: IO[str]) -> _Host:
        command = [
            sys.executable,
            "-m",
            "engramdb_bench.faults.sdk_host",
            str(self.profile),
            self.server.url,
            self.token,
            str(self.config.turns),
            str(self.config.pace),
        ]
        host = _Host(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True))
        host.reader = threading.Thread(target=host.read, daemon=True)
        host.reader.start()
        self.hosts.append(host)
        return host

    def result(self, expected: dict[str, str], served: list[check.Row], stored: list[check.Row]) -> dict[str, Any]:
        pending, dead = _pending(self.profile), _pending(self.profile, dead=True)
        verdicts = {"served": check.compare(expected, served), "stored": check.compare(expected, stored)}
        resent = [line for h in self.hosts for line in h.lines if line.startswith("resent ")]
        last = self.hosts[-1]
        ok = (
            all(v.ok for v in verdicts.values())
            and pending == 0
            and dead == 0
            and last.process.returncode == 0
            and all(r.endswith(" same") for r in resent)
            and not any(f.startswith("failed") for f in self.flaps)
        )  # a restart that failed fails the run
        return {
            "turns": self.config.turns,
            "hostKills": len(self.hosts) - 1,
            "pendingAtHostKills": self.pending_at_kill,
            "serverStops": len(self.flaps),
            "serverStopSignals": {s: self.flaps.count(s) for s in sorted(set(self.flaps))},
            "hostExit": last.process.returncode,
            "hostSaid": last.lines[-3:],
            "resentLastTurn": resent,
            "outboxPending": pending,
            "outboxDeadLetters": dead,
            "lost": sum(len(v.missing) for v in verdicts.values()),
            "duplicates": sum(len(v.duplicate_ids) + len(v.duplicate_contents) for v in verdicts.values()),
            "checks": {name: v.as_json() for name, v in verdicts.items()},
            "ok": ok,
        }


def _flap(
    server: ServerProcess, config: FlapConfig, rng: random.Random, stop: threading.Event, flaps: list[str]
) -> None:
    """Stop the server (SIGKILL and SIGTERM in turn) and start it again until told to stop."""
    signals = (signal.SIGKILL, signal.SIGTERM)
    try:
        while not stop.wait(rng.uniform(*config.up)):
            sig = signals[len(flaps) % 2]
            server.stop(sig)
            flaps.append(sig.name)
            time.sleep(rng.uniform(*config.down))
            server.start()
    except Exception as error:  # the server would not start again: the run reports it
        flaps.append(f"failed: {type(error).__name__}: {error}")


def _pending(profile: Path, *, dead: bool = False) -> int:
    """Turns in the outbox file (or its dead letters), read while no host runs."""
    outbox = OutboxStore(profile)
    try:
        return len(outbox.dead_letters()) if dead else outbox.count()
    finally:
        outbox.close()


def _wait(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no progress in {timeout} s")
        time.sleep(0.01)


def _key(url: str) -> str:
    scope = {
        "agentId": HOST.agent_id,
        "profileId": HOST.profile_id,
        "privacyScope": HOST.privacy_scope,
        "participantScopeHash": HOST.participant_scope_hash,
        "sandboxEligible": HOST.sandbox_eligible,
    }
    store = open_store(url)
    try:
        token, _ = auth.create_key(store, tenant=TENANT, role="agent", grant=scope, create_tenant=True)
    finally:
        store.close()
    return token
