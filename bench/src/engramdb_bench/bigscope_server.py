"""The big-scope benchmark's server side: a real ``engram serve`` on the loaded data (time to
``/readyz``, the first recall after the restart and the next ones, peak RSS), and ingest through
REST batch writes against the embedder's own batch throughput."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from engramdb.config import Settings
from engramdb.core import auth
from engramdb_bench.bigscope_corpus import Corpus, episode_body
from engramdb_bench.bigscope_model import TENANT, Asked, Progress, Target, pct, scope_of
from engramdb_bench.machine import load_average

# -- a real server ---------------------------------------------------------------------------


@contextmanager
def server(target: Target, progress: Progress, **env: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run ``engram serve`` on the target's data; yield its URL and process (stopped after)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (target.home / f"server-{port}.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "engramdb.cli", "serve", "--port", str(port)],
        env={**target.env(), **env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield f"http://127.0.0.1:{port}", process
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return -1.0


def _wait(http: httpx.Client, path: str, deadline_s: float) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < deadline_s:
        try:
            if http.get(path).status_code == 200:
                return (time.perf_counter() - started) * 1000
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.05)
    raise TimeoutError(f"{path} did not answer 200 in {deadline_s} s")


def measure_server(
    target: Target, asked: Asked, progress: Progress, *, touch_all: bool, warm_queries: int = 100
) -> dict[str, Any]:
    """Restart on the data: time to ready, the first recall and the next ones over HTTP, peak RSS.
    With ``touch_all`` every scope of the layout is recalled from once before the timed ones,
    so the server holds (or has dropped) them all: the memory limit is what bounds its RSS."""
    store = target.open()
    try:
        token, _ = auth.create_key(store, tenant=TENANT, role="admin", grant={})
    finally:
        store.close()
    load_before = load_average()
    started = time.perf_counter()
    with (
        server(target, progress) as (url, process),
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
    ):
        live_ms = _wait(http, "/healthz", 120)
        ready_ms = _wait(http, "/readyz", 3600) + live_ms
        readiness = http.get("/readyz").json()
        asks = list(zip(asked.scopes, asked.texts, strict=True))
        first_ms, first_timings = _http_recall(http, *asks[0])
        touched = [_http_recall(http, s, asks[0][1])[0] for s in range(asked.layout_scopes)] if touch_all else []
        rest = [_http_recall(http, s, t) for s, t in asks[1 : warm_queries + 1]]
        rss = peak_rss_mb(process.pid)
    warm = [ms for ms, _ in rest]
    result = {
        "startToReadyMs": round(ready_ms, 1),
        "startToLiveMs": round(live_ms, 1),
        "readyz": readiness,
        "firstRecallMs": round(first_ms, 2),
        "firstRecallTimings": first_timings,
        "warmRecallMs": pct(warm),
        "warmSearchMs": pct([t.get("searchMs", 0.0) for _, t in rest]),
        "firstOverWarmP50": round(first_ms / float(np.percentile(warm, 50)), 2) if warm else None,
        "touchEveryScopeMs": pct(touched),
        "peakRssMb": rss,
        "wallSeconds": round(time.perf_counter() - started, 1),
        "loadAverage": {"before": load_before, "after": load_average()},
    }
    progress(
        f"  server: ready in {ready_ms / 1000:.1f} s, first recall {first_ms:.1f} ms, warm p50 "
        f"{result['warmRecallMs'].get('p50')} ms, peak RSS {rss} MB"
    )
    return result


def measure_restarts(target: Target, asked: Asked, progress: Progress, restarts: int) -> dict[str, Any]:
    """Restart the server ``restarts`` times: each time the first recall once ready (a query not
    asked before) against the p50 of the 20 recalls after it; one sample each is too noisy alone."""
    store = target.open()
    try:
        token, _ = auth.create_key(store, tenant=TENANT, role="admin", grant={})
    finally:
        store.close()
    asks = list(zip(asked.scopes, asked.texts, strict=True))
    runs = []
    for i in range(restarts):
        mine = asks[i * 21 : i * 21 + 21] or asks[:21]
        with (
            server(target, progress) as (url, _),
            httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
        ):
            _wait(http, "/readyz", 3600)
            first_ms, timings = _http_recall(http, *mine[0])
            warm = [_http_recall(http, s, t)[0] for s, t in mine[1:]]
        runs.append(
            {
                "firstMs": round(first_ms, 2),
                "firstTimings": timings,
                "warmP50Ms": pct(warm).get("p50"),
                "ratio": round(first_ms / float(np.percentile(warm, 50)), 2),
                "loadAverage": load_average(),
            }
        )
        progress(f"  restart {i + 1}: first {first_ms:.1f} ms, warm p50 {runs[-1]['warmP50Ms']} ms")
    return {"runs": runs, "medianRatio": float(np.median([r["ratio"] for r in runs]))}


def _http_recall(http: httpx.Client, scope: int, text: str) -> tuple[float, dict[str, float]]:
    started = time.perf_counter()
    answer = http.post("/v1/recall", json={"query": text, "limit": 10, "scope": scope_of(scope)})
    ms = (time.perf_counter() - started) * 1000
    answer.raise_for_status()
    return ms, dict(answer.json().get("timings", {}))


# -- ingest ----------------------------------------------------------------------------------


def measure_ingest(corpus: Corpus, root: Path, n: int, progress: Progress, rounds: int = 3) -> dict[str, Any]:
    """The embedder's own batch throughput against REST batch writes of the same texts, interleaved."""
    from engramdb.core.embedding import make_embedder

    texts = [text for _, _, text, _, _ in corpus.rows(n, seed=11)]
    embedder = make_embedder("minilm")
    embedder.embed(["load"])
    batch = Settings().embed_batch_size
    passes: list[dict[str, Any]] = []
    for r in range(rounds):
        load_before = load_average()
        started = time.perf_counter()
        for start in range(0, n, batch):
            embedder.embed(texts[start : start + batch])
        embed_rate = n / (time.perf_counter() - started)
        rest_rate = _rest_ingest(corpus, root / f"round-{r}", n, progress)
        passes.append(
            {
                "embedderTextsPerSec": round(embed_rate, 1),
                "restEpisodesPerSec": round(rest_rate, 1),
                "ratio": round(rest_rate / embed_rate, 3),
                "loadAverage": [load_before, load_average()],
            }
        )
        progress(
            f"ingest round {r + 1}: embedder {embed_rate:.1f}/s, REST {rest_rate:.1f}/s ({rest_rate / embed_rate:.0%})"
        )
    return {"texts": n, "embedBatch": batch, "restBatch": 100, "passes": passes}


def _rest_ingest(corpus: Corpus, home: Path, n: int, progress: Progress) -> float:
    home.mkdir(parents=True, exist_ok=True)
    target = Target("sqlite", home)
    store = target.open()
    try:
        token, _ = auth.create_key(store, tenant=TENANT, role="admin", grant={}, create_tenant=True)
    finally:
        store.close()
    bodies = [
        episode_body(scope_of(0), t, text, f"ingest-{s}", i)
        for i, (_, t, text, s, _) in enumerate(corpus.rows(n, seed=11))
    ]
    with (
        server(target, progress) as (url, _),
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
    ):
        _wait(http, "/readyz", 600)
        started = time.perf_counter()
        for start in range(0, n, 100):
            http.post("/v1/episodes/batch", json={"episodes": bodies[start : start + 100]}).raise_for_status()
        reader = target.open()
        try:
            while reader.tenant(TENANT).embedding_backlog():  # every row was written before this wait
                time.sleep(0.05)
        finally:
            reader.close()
        return n / (time.perf_counter() - started)
