"""``engram bench load``: an open-loop mixed workload against a real server on loopback.

A server (``engram serve``, its own process) is started on a free 127.0.0.1 port over a fresh
data folder, and one scope is filled with ``memories`` synthetic episodes (batches through the
API, then the embedding worker's backlog drained). Then, for each offered rate, requests are
*sent on a schedule* (open loop: a slow answer does not delay the next request, so queueing
shows as latency instead of hiding as a lower rate): ``recall_share`` recalls, the rest episode
writes. Latency runs from each request's scheduled time to its answer. Before the first rate
each arm answers ``WARM_RECALLS`` recalls, untimed: a server builds a scope's in-memory copy at
its first recall after a start (seconds at 10,000 memories), which a benchmark of steady load
would otherwise count as the first rate's tail. The server's RSS is sampled from /proc
throughout. Then the reference (load_reference) is offered the same rates, recalls only, and
each arm's capacity is reported with their ratio.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from engramdb.core import auth
from engramdb.errors import EngramError
from engramdb.storage.registry import open_store
from engramdb_bench.load_reference import ENGRAMDB, REFERENCE, Requests, capacity, fill
from engramdb_bench.machine import NO_QUERY_CACHE, free_port, load_average, machine_info
from engramdb_bench.synthetic_corpus import SCOPE, episode_bodies, queries
from engramdb_bench.versus.reference_arm import ReferenceServer

LONG_SCOPE: dict[str, Any] = {**SCOPE, "profileId": "bench-long"}  # the long episodes' own scope
REFUSED = (429, 503)  # answers that say "not now", fast, with Retry-After
WARM_RECALLS = 20


@dataclass(frozen=True)
class LoadConfig:
    rates: list[float]
    seconds: float = 30.0
    memories: int = 10_000
    recall_share: float = 0.7
    embedder: str = "minilm"
    reference_embedder: str | None = None  # default: the same as EngramDB's
    seed: int = 7
    max_in_flight: int = 32
    long_episodes: int = 0  # first, on the empty server: episodes past the model's 256 tokens, then RSS
    extra_env: dict[str, str] = field(default_factory=dict)
    reference: bool = True  # also offer the bare pipeline the same rates, recalls only (load_reference)


class _Rss:
    """Samples a process's resident set size (MB) every 0.25 s in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid, self.samples = pid, [0.0]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def now(self) -> float:
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            self.samples.append(self.now())

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run(config: LoadConfig, progress: Callable[[str], None] = print) -> dict[str, Any]:
    """Start a server, fill its scope, offer each rate; return the results (JSON-ready)."""
    with tempfile.TemporaryDirectory(prefix="engram-load-") as folder:
        home = Path(folder)
        token = _admin_free_key(home, SCOPE)
        long_token = _admin_free_key(home, LONG_SCOPE)
        port = free_port()
        env = {
            **os.environ,
            "ENGRAM_HOME": str(home),
            "ENGRAM_PORT": str(port),
            "ENGRAM_HOST": "127.0.0.1",
            "ENGRAM_EMBEDDER": config.embedder,
            "ENGRAM_MAX_IN_FLIGHT": str(config.max_in_flight),
            **NO_QUERY_CACHE,  # its questions repeat: each recall embeds its own, as the reference arm's
            **config.extra_env,
        }
        log = (home / "server.log").open("w")
        server = subprocess.Popen([sys.executable, "-m", "engramdb.cli", "serve"], env=env, stdout=log, stderr=log)
        rss = _Rss(server.pid)
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_until_up(url, server)
            progress(f"server up (pid {server.pid}, RSS {rss.now():.0f} MB)")
            long_rss = _long_episodes(url, long_token, config, rss, progress) if config.long_episodes else None
            progress(f"filling {config.memories:,} memories")
            fill_s = _fill(url, token, config)
            filled_rss = rss.now()
            progress(f"  filled and embedded in {fill_s:.1f} s; RSS {filled_rss:.0f} MB")
            warm_s = _warm(url, token, config.seed)
            results = [_rate(url, token, rate, config, rss, progress) for rate in config.rates]
        finally:
            server.terminate()
            server.wait(30)
            rss.stop()
            log.close()
    reference = _reference(config, progress) if config.reference else None
    return {
        "config": {**config.__dict__, "extra_env": config.extra_env},
        "machine": machine_info(),
        "longEpisodes": long_rss,
        "fillSeconds": round(fill_s, 1),
        "rssAfterFillMb": round(filled_rss, 1),
        "warmSeconds": round(warm_s, 3),
        "rssMaxMb": round(max(rss.samples), 1),
        "results": results,
        **_capacities(results, reference),
    }


def _reference(config: LoadConfig, progress: Callable[[str], None]) -> list[dict[str, Any]]:
    """The bare pipeline, filled with the same memories, offered the same rates (recalls only)."""
    with tempfile.TemporaryDirectory(prefix="engram-load-reference-") as work:
        server = ReferenceServer(Path(work), config.reference_embedder or config.embedder)
        rss = _Rss(server.process.pid)
        try:
            with httpx.Client(timeout=10) as http:
                server.wait_ready(http)
            progress(f"reference: filling {config.memories:,} memories")
            progress(f"  filled in {fill(server.url, config.memories, config.seed):.1f} s; RSS {rss.now():.0f} MB")
            _warm(server.url, None, config.seed, REFERENCE)
            recalls_only = replace(config, recall_share=1.0)
            return [_rate(server.url, None, rate, recalls_only, rss, progress, REFERENCE) for rate in config.rates]
        finally:
            server.stop()
            rss.stop()


def _capacities(results: list[dict[str, Any]], reference: list[dict[str, Any]] | None) -> dict[str, Any]:
    """Each arm's capacity (the highest rate served whole with p99 under 100 ms) and their ratio."""
    if reference is None:
        return {"capacityPerS": capacity(results)}
    ours, floor = capacity(results), capacity(reference)
    return {
        "reference": reference,
        "capacityPerS": ours,
        "referenceCapacityPerS": floor,
        "capacityRatio": round(ours / floor, 3) if floor else None,
    }


def _long_episodes(
    url: str, token: str, config: LoadConfig, rss: _Rss, progress: Callable[[str], None]
) -> dict[str, float]:
    """Embed the long episodes on the empty server; return the time it took and the server's RSS."""
    long_s = _embed_long(url, token, config.long_episodes, config.seed)
    rss.samples.append(rss.now())  # "after" is one of the samples the maximum is taken over
    long_rss = {
        "seconds": round(long_s, 3),
        "rssAfterMb": round(rss.samples[-1], 1),
        "rssMaxMb": round(max(rss.samples), 1),
    }
    progress(
        f"  {config.long_episodes:,} long episodes embedded in {long_s:.1f} s; RSS "
        f"{long_rss['rssAfterMb']:.0f} MB after, {long_rss['rssMaxMb']:.0f} MB at most"
    )
    return long_rss


def _rate(
    url: str,
    token: str | None,
    rate: float,
    config: LoadConfig,
    rss: _Rss,
    progress: Callable[[str], None],
    requests: Requests = ENGRAMDB,
) -> dict[str, Any]:
    """Offer one rate; return its row, with the server's largest RSS meanwhile."""
    started_rss = len(rss.samples)
    row = asyncio.run(_offer(url, token, rate, config, requests))
    row["rssMaxMb"] = round(max(rss.samples[started_rss:] or [rss.now()]), 1)
    row["loadAverage"] = load_average()
    progress(
        f"  {rate:g}/s: achieved {row['achievedPerS']:.1f}/s, p50 {row['p50Ms']:.1f} ms, "
        f"p99 {row['p99Ms']:.1f} ms, refused {row['refused']}, errors {row['errors']}, "
        f"RSS max {row['rssMaxMb']:.0f} MB"
    )
    return row


def _admin_free_key(home: Path, scope: dict[str, Any]) -> str:
    """An agent key bound to ``scope``, created in the store before the server starts."""
    store = open_store(f"sqlite:///{home}")
    try:
        token, _ = auth.create_key(store, tenant="default", role="agent", grant=dict(scope), create_tenant=True)
    finally:
        store.close()
    return token


def _warm(url: str, token: str | None, seed: int, requests: Requests = ENGRAMDB) -> float:
    """Ask ``WARM_RECALLS`` recalls one after another, untimed; return how long they took."""
    started = time.perf_counter()
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
        for query in queries(WARM_RECALLS, seed + 1):
            path, body = requests[0](query)
            answer = http.post(path, json=body)
            if answer.status_code != 200:
                raise EngramError(f"a warm-up recall failed: {answer.status_code} {answer.text[:200]}")
    return time.perf_counter() - started


def _fill(url: str, token: str, config: LoadConfig) -> float:
    return _write_all(url, token, list(episode_bodies(config.memories, config.seed)), batch=100)


def _embed_long(url: str, token: str, count: int, seed: int) -> float:
    """Write ``count`` long episodes (each several turns joined: past the model's 256 tokens) in
    batches of 64, in a scope of their own, and wait until all are embedded."""
    turns = episode_bodies(count * 8, seed + 7)
    bodies = []
    for i in range(count):
        parts = [next(turns) for _ in range(8)]
        bodies.append(
            parts[0]
            | LONG_SCOPE
            | {
                "externalSessionId": f"long-{i}",
                "turnIndex": 0,
                "userText": " ".join(p["userText"] + " " + p["assistantText"] for p in parts),
            }
        )
    return _write_all(url, token, bodies, batch=64)


def _write_all(url: str, token: str, bodies: list[dict[str, Any]], batch: int) -> float:
    started = time.perf_counter()
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
        for i in range(0, len(bodies), batch):
            answer = http.post("/v1/episodes/batch", json={"episodes": bodies[i : i + batch]})
            if answer.status_code != 200:
                raise EngramError(f"writing failed: {answer.status_code} {answer.text[:200]}")
        while True:  # the worker embeds in the background; the benchmark goes on once it is done
            metrics = http.get("/metrics").text
            backlog = next(
                (
                    float(line.split()[-1])
                    for line in metrics.splitlines()
                    if line.startswith("engram_embedding_backlog ")
                ),
                0.0,
            )
            if backlog == 0:
                return time.perf_counter() - started
            time.sleep(0.5)


async def _offer(url: str, token: str | None, rate: float, config: LoadConfig, requests: Requests) -> dict[str, Any]:
    rng = random.Random(config.seed + int(rate))
    asked = queries(200, config.seed)
    fresh = episode_bodies(int(rate * config.seconds) + 1, config.seed + 99)  # new sessions: real writes
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    failures: dict[str, int] = {}
    limits = httpx.Limits(max_connections=512, max_keepalive_connections=512)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    as_recall, as_write = requests
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60, limits=limits) as http:

        async def one(due: float, recall: bool, body: dict[str, Any]) -> None:
            path, sent = as_recall(rng.choice(asked)) if recall else as_write(body)
            try:
                answer = await http.post(path, json=sent)
                status = answer.status_code
            except httpx.HTTPError as error:  # no answer at all: counted as an error, by its kind
                status = 0
                failures[type(error).__name__] = failures.get(type(error).__name__, 0) + 1
            statuses[status] = statuses.get(status, 0) + 1
            if status < 400:
                latencies.append((time.perf_counter() - due) * 1000)

        tasks = []
        start = time.perf_counter() + 0.1
        count = int(rate * config.seconds)
        for i in range(count):
            due = start + i / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            body = next(fresh) | {"externalSessionId": f"load-{rate:g}-{i}"}
            tasks.append(asyncio.create_task(one(due, rng.random() < config.recall_share, body)))
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - start
    latencies.sort()
    served = len(latencies)
    refused = sum(n for s, n in statuses.items() if s in REFUSED)
    return {
        "offeredPerS": rate,
        "seconds": config.seconds,
        "sent": count,
        "served": served,
        "achievedPerS": round(served / elapsed, 1),
        "refused": refused,
        "errors": sum(n for s, n in statuses.items() if (s >= 400 and s not in REFUSED) or s == 0),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "noAnswer": failures,
        "p50Ms": round(_pct(latencies, 0.5), 2),
        "p99Ms": round(_pct(latencies, 0.99), 2),
    }


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def _wait_until_up(url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise EngramError(f"the server exited with {server.returncode} before it answered")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise EngramError("the server did not answer /healthz within 120 s")
