"""``engram bench assist``: what model-assisted memory costs EngramDB itself, with a scripted
model that answers in a fixed time (default 50 ms) on loopback.

Three processes, as deployed: the scripted model (``python -m engramdb_bench.scripted_chat``), the
server (``engram serve`` with ``ENGRAM_LLM__*`` set and the default embedder), and this driver,
which talks to both over HTTP. It measures:

1. **Overhead per extracted turn**: episodes written with ``extract=true`` are run by the server's
   queue; for each job, its run time (``startedAt`` to ``finishedAt``) minus the time its model
   calls took (``result.usage.modelMs``): EngramDB's own work per turn (reading the turn,
   screening, neighbours by both recall arms, the lifecycle writes, links, audit, ledger).
2. **Throughput through the queue**: turns from the first job's start to the last job's end.
3. **Recall latency side by side**: the same seeded queries with the queue idle, then while it
   works through a backlog; client-observed and the server's own ``searchMs``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from engramdb import clock
from engramdb_bench import assist_bench_workload as workload
from engramdb_bench.machine import free_port, load_average, machine_info

GAP_SECONDS = 0.2  # before each block of recalls


@dataclass(frozen=True)
class ModelBenchConfig:
    turns: int = 300  # turns extracted through the queue
    seed_memories: int = 1000  # episodes in the scope before the run (recall's corpus)
    seed_facts: int = 100  # stated facts in the scope (the neighbours judgement finds)
    queries: int = 200  # recall queries per phase
    model_ms: float = 50.0  # the scripted model's answer time
    workers: int = 8  # the server's extraction threads (llm.workers)
    embedder: str = "minilm"
    seed: int = 7


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))] if ordered else float("nan")


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": _pct(values, 50),
        "p95": _pct(values, 95),
        "p99": _pct(values, 99),
        "mean": statistics.fmean(values) if values else float("nan"),
    }


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a live process has used (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def _process(args: list[str], env: dict[str, str], ready: Callable[[], bool], what: str) -> Iterator[int]:
    # Its output goes to a file: a pipe nobody reads fills up, and then the process blocks on a log line.
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 120
            while not ready():
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"{what} did not start: {log.read()[-2000:]}")
                time.sleep(0.1)
            yield proc.pid
        finally:
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:  # a loaded machine: never leave it behind, nor lose the results
                proc.kill()
                proc.wait()


def _up(url: str) -> Callable[[], bool]:
    def probe() -> bool:
        try:
            return httpx.get(url, timeout=1).status_code < 500
        except httpx.HTTPError:
            return False

    return probe


def run(config: ModelBenchConfig, progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Run the benchmark in a temporary data folder; return the results as a JSON-ready dict."""
    with tempfile.TemporaryDirectory(prefix="engram-model-bench-") as home:
        model_port, server_port = free_port(), free_port()
        env = {
            **os.environ,
            "ENGRAM_HOME": home,
            "ENGRAM_EMBEDDER": config.embedder,
            "ENGRAM_LLM__BASE_URL": f"http://127.0.0.1:{model_port}/v1",
            "ENGRAM_LLM__MODEL": "scripted-bench",
            "ENGRAM_LLM__WORKERS": str(config.workers),
            "ENGRAM_LLM__MAX_CONCURRENCY": str(max(4, config.workers)),
        }
        model = [
            sys.executable,
            "-m",
            "engramdb_bench.scripted_chat",
            "--port",
            str(model_port),
            "--delay",
            str(config.model_ms / 1000),
        ]
        # The server without workers: the queue fills first, then this bench starts `engram assist work`
        # (what `engram serve` starts itself), so recall is measured before and while the queue works.
        server = [sys.executable, "-m", "engramdb.cli", "serve", "--port", str(server_port)]
        url = f"http://127.0.0.1:{server_port}"
        serve_env = {**env, "ENGRAM_LLM__WORKERS": "0"}
        with (
            _process(model, env, _up(f"http://127.0.0.1:{model_port}/"), "the scripted model"),
            _process(server, serve_env, _up(f"{url}/healthz"), "the server"),
        ):
            key = _agent_key(home, env)
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
                workers = [sys.executable, "-m", "engramdb.cli", "assist", "work"]
                return _measure(http, config, progress, lambda: _process(workers, env, lambda: True, "the workers"))


def _agent_key(home: str, env: dict[str, str]) -> str:
    scope = [
        "--agent-id",
        "bench",
        "--profile-id",
        "default",
        "--participant",
        "a" * 64,
        "--privacy",
        "private",
        "--sandbox-eligible",
        "false",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "engramdb.cli", "keys", "create", "--role", "agent", *scope, "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return str(json.loads(done.stdout)["key"])


def _seed(http: httpx.Client, config: ModelBenchConfig, rng: random.Random) -> None:
    turns = [workload.turn(rng, i, f"seed-{i // 10}") for i in range(config.seed_memories)]
    for start in range(0, len(turns), 100):
        http.post("/v1/episodes/batch", json={"episodes": turns[start : start + 100]}).raise_for_status()
    for i in range(config.seed_facts):
        http.post("/v1/facts", json=workload.fact(rng, i)).raise_for_status()
    _embedded(http)


def _recalls(http: httpx.Client, queries: list[str]) -> dict[str, Any]:
    times: dict[str, list[float]] = {"clientMs": [], "serverSearchMs": []}
    _timed(http, queries, times)
    return {k: _stats(v) for k, v in times.items()}


def _measure(
    http: httpx.Client,
    config: ModelBenchConfig,
    progress: Callable[[str], None],
    workers: Callable[[], AbstractContextManager[int]],
) -> dict[str, Any]:
    load_before = load_average()
    rng = random.Random(config.seed)
    progress(f"seeding {config.seed_memories} episodes and {config.seed_facts} facts")
    _seed(http, config, rng)
    queries = [workload.query(rng) for _ in range(config.queries)]
    before = _recalls(http, queries)
    progress(f"writing {config.turns} episodes with extract=true (no worker yet)")
    jobs, writes = _enqueue(http, rng, config.turns, "a")
    with workers() as pid:
        progress(f"{config.workers} workers run the queue (nothing else asked of the server)")
        finished = _wait(http, jobs, progress)
        worker_cpu = cpu_seconds(pid)
        os.kill(pid, signal.SIGSTOP)  # paused: the queue fills again, then runs in blocks between paused ones
        try:
            progress(f"recall, in blocks: workers paused / running ({config.turns} more turns queued)")
            _enqueue(http, rng, config.turns, "b")
            idle, busy = _alternate(http, queries, pid)
        finally:
            os.kill(pid, signal.SIGCONT)
    report = _report(config, idle, busy, writes, finished)
    report["recall"]["beforeAnyTurn"] = before
    report["workerProcessCpuMsPerTurn"] = worker_cpu * 1000 / max(1, report["jobs"]["done"])  # start-up included
    return {**report, "loadAverage": {"before": load_before, "after": load_average()}}


def _enqueue(http: httpx.Client, rng: random.Random, turns: int, tag: str) -> tuple[list[str], list[float]]:
    """Write ``turns`` episodes with extract=true; return their jobs and each write's time (ms)."""
    jobs, writes = [], []
    for i in range(turns):
        started = time.perf_counter()
        answer = http.post("/v1/episodes", params={"extract": "true"}, json=workload.turn(rng, i, f"{tag}-{i // 10}"))
        writes.append((time.perf_counter() - started) * 1000)
        jobs.append(str(answer.json()["extractionJobId"]))
    _embedded(http)
    return jobs, writes


def _alternate(http: httpx.Client, queries: list[str], pid: int, block: int = 10) -> tuple[dict[str, Any], ...]:
    """The same queries with the workers paused and running, block after block (so the machine's
    other load falls on both alike): (paused, running)."""
    paused: dict[str, list[float]] = {"clientMs": [], "serverSearchMs": []}
    running: dict[str, list[float]] = {"clientMs": [], "serverSearchMs": []}
    left_before = _left(http)
    for start in range(0, len(queries), block):
        chunk = queries[start : start + block]
        # The same idle gap before both blocks: a recall after 0.2 s of quiet took ~3 ms longer
        # than one right after another (cold caches) whether the workers ran or not.
        time.sleep(GAP_SECONDS)
        _timed(http, chunk, paused)
        os.kill(pid, signal.SIGCONT)
        time.sleep(GAP_SECONDS)  # the workers are back at it
        _timed(http, chunk, running)
        os.kill(pid, signal.SIGSTOP)
    idle: dict[str, Any] = {k: _stats(v) for k, v in paused.items()}
    busy: dict[str, Any] = {k: _stats(v) for k, v in running.items()}
    busy["jobsDoneDuring"] = left_before - _left(http)
    return idle, busy


def _left(http: httpx.Client) -> int:
    """Jobs queued or running (the list holds 500 at most: the bench queues fewer at a time)."""
    return sum(
        len(http.get("/v1/assist/jobs", params={"state": state, "limit": 500}).json()["jobs"])
        for state in ("queued", "running")
    )


def _timed(http: httpx.Client, queries: list[str], into: dict[str, list[float]]) -> None:
    for query in queries:
        started = time.perf_counter()
        answer = http.post("/v1/recall", json={"query": query, "limit": 8})
        into["clientMs"].append((time.perf_counter() - started) * 1000)
        answer.raise_for_status()
        into["serverSearchMs"].append(float(answer.json()["timings"]["searchMs"]))


def _embedded(http: httpx.Client) -> None:
    """Wait until the newest episode's vector is ready (the embedding worker takes them in order)."""
    while http.get("/v1/episodes", params={"limit": 1}).json()["episodes"][0]["embedding"]["state"] != "ready":
        time.sleep(0.5)


def _wait(http: httpx.Client, jobs: list[str], progress: Callable[[str], None]) -> list[dict[str, Any]]:
    deadline = time.monotonic() + max(600.0, 2.0 * len(jobs))  # a stuck queue ends the run, not the machine
    while True:
        listed = http.get("/v1/assist/jobs", params={"limit": 500}).json()["jobs"]
        states = [j["state"] for j in listed if j["jobId"] in set(jobs)]
        if (len(states) == len(jobs) and all(s in ("done", "failed") for s in states)) or time.monotonic() > deadline:
            return [j for j in listed if j["jobId"] in set(jobs)]
        progress(f"  {states.count('done')}/{len(jobs)} done")
        time.sleep(1.0)


def _report(
    config: ModelBenchConfig,
    idle: dict[str, Any],
    busy: dict[str, Any],
    writes: list[float],
    jobs: list[dict[str, Any]],
) -> dict[str, Any]:
    done = [j for j in jobs if j["state"] == "done"]
    overhead, runs, model, calls, candidates = [], [], [], [], []
    cpu = [float(j["cpuMs"]) for j in done if j.get("cpuMs") is not None]
    for job in done:
        run_ms = (clock.parse(job["finishedAt"]) - clock.parse(job["startedAt"])).total_seconds() * 1000
        usage = job["result"]["usage"]
        runs.append(run_ms)
        model.append(usage["modelMs"])
        overhead.append(run_ms - usage["modelMs"])
        calls.append(usage["calls"])
        candidates.append(len(job["result"]["items"]))
    first = min(clock.parse(j["startedAt"]) for j in done)
    last = max(clock.parse(j["finishedAt"]) for j in done)
    span = (last - first).total_seconds()
    actions: dict[str, int] = {}
    for job in done:
        for item in job["result"]["items"]:
            actions[item["action"]] = actions.get(item["action"], 0) + 1
    return {
        "config": vars(config),
        "machine": machine_info(),
        "date": clock.now_text(),
        "jobs": {
            "done": len(done),
            "failed": len(jobs) - len(done),
            "actions": actions,
            "modelCallsPerTurn": statistics.fmean(calls),
            "candidatesPerTurn": statistics.fmean(candidates),
        },
        "overheadMsPerTurn": _stats(overhead),
        "cpuMsPerTurn": _stats(cpu),
        "jobRunMs": _stats(runs),
        "modelMsPerTurn": _stats(model),
        "episodeWriteWithExtractMs": _stats(writes),
        "throughput": {"turns": len(done), "seconds": span, "turnsPerSecond": len(done) / span if span else 0.0},
        "recall": {"idle": idle, "whileExtracting": busy},  # the same corpus: the queue full, then worked
        "targets": {"overheadP50Ms": 20.0, "turnsPerSecond": 20.0},
    }
