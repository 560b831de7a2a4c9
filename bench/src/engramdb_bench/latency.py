"""Recall latency benchmark: server-side recall time of one large scope, by scope size.

What it does, per ``size``:

1. writes ``size`` synthetic conversational episodes (:mod:`~engramdb_bench.synthetic_corpus`)
   into ONE scope of a fresh tenant of the embedded store through the production bulk path
   (``MemoryService.write_episodes``, batches of ``batch_size``);
2. gives every row a vector through the tenant store's ``save_embeddings`` (the same call the
   embedding worker makes), either embedding every text with the real embedder (``full``) or,
   when that would take longer than ``full_embed_budget_s``, reusing a pool of real embeddings
   (``pool``, see :func:`~engramdb_bench.latency_fill.pool_vectors`);
3. reopens the store (empty vector cache), runs one warm-up query (it loads the scope's vectors:
   reported as the cold load) and then ``queries`` seeded queries through ``MemoryService.recall``,
   keeping ``timings["searchMs"]`` (everything after the query embedding: both arms, fusion,
   record fetch, features) and ``timings["embedMs"]`` separately
   (:mod:`~engramdb_bench.latency_timing`);
4. times recall with and without the lifecycle filters (:mod:`~engramdb_bench.lifecycle_cost`).

Before the sizes, ``ingest_sample`` episodes are written and drained through the embedding job
with the real embedder to measure end-to-end ingest throughput; their vectors form the pool.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from engramdb.config import Settings
from engramdb.contract.events import Scope
from engramdb.core import auth
from engramdb.core.embedding import make_embedder
from engramdb_bench import lifecycle_cost
from engramdb_bench.latency_config import BenchConfig, BenchRun, Progress, RecordingEmbedder
from engramdb_bench.latency_fill import fill_tenant, measure_ingest, vector_mode
from engramdb_bench.latency_timing import measure_latency
from engramdb_bench.machine import load_average, machine_info, source_info
from engramdb_bench.synthetic_corpus import SCOPE, queries

TARGET = {"size": 10_000, "p50Ms": 10.0, "p99Ms": 30.0}


def run(config: BenchConfig, progress: Progress = lambda _: None) -> dict[str, Any]:
    """Run the benchmark and return the JSON-ready result."""
    config.validate()
    temporary = config.home is None
    home = Path(tempfile.mkdtemp(prefix="engram-bench-")) if config.home is None else config.home
    home.mkdir(parents=True, exist_ok=True)
    # Every query embedded (embedMs stays the model's time): no cache of query vectors.
    settings = Settings(home=home, embedder=config.embedder, query_cache_size=0)
    embedder = RecordingEmbedder(make_embedder(config.embedder))
    state = BenchRun(config, home, settings, embedder, progress)
    started, load_at_start = time.perf_counter(), load_average()
    try:
        progress(f"data folder: {home}{' (temporary)' if temporary else ''}")
        ingest = measure_ingest(state)
        results = [_measure_size(state, size, ingest["embedEpisodesPerSec"]) for size in config.sizes]
    finally:
        if temporary:
            shutil.rmtree(home, ignore_errors=True)
    return {
        "benchmark": "recall_latency",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_info(),
        "source": source_info(),
        "config": _config_report(state, temporary),
        "ingest": ingest,
        "results": results,
        "targets": _targets(results),
        "totalSeconds": round(time.perf_counter() - started, 1),
        "loadAverage": {"start": load_at_start, "end": load_average()},
    }


def _config_report(state: BenchRun, temporary: bool) -> dict[str, Any]:
    config = state.config
    return {
        "sizes": list(config.sizes),
        "queries": config.queries,
        "embedder": config.embedder,
        "embedderModel": state.embedder.model_id,
        "ingestSample": config.ingest_sample,
        "batchSize": config.batch_size,
        "seed": config.seed,
        "vectors": config.vectors,
        "fullEmbedBudgetSeconds": config.full_embed_budget_s,
        "poolNoise": config.pool_noise,
        "limit": config.limit,
        "retrieval": state.settings.retrieval.model_dump(),
        "home": None if temporary else str(state.home),
    }


def _targets(results: list[dict[str, Any]]) -> dict[str, Any]:
    target: dict[str, Any] = {**TARGET, "measured": False}
    for result in results:
        if result["size"] == TARGET["size"]:
            search = result["searchMs"]
            target.update(
                measured=True, p50Met=search["p50"] <= TARGET["p50Ms"], p99Met=search["p99"] <= TARGET["p99Ms"]
            )
    return target


def _measure_size(state: BenchRun, size: int, embed_rate: float) -> dict[str, Any]:
    """Fill (or reuse) the size's tenant, then time its query set and the lifecycle filters."""
    mode = vector_mode(state, size, embed_rate)
    name = f"recall-{size}-s{state.config.seed}-{state.config.embedder.split(':')[0]}-{mode}"
    state.progress(f"size {size:,}: tenant {name}, vectors: {mode}")
    fill, write_s = fill_tenant(state, name, size, mode)
    latency = measure_latency(state, name, size)
    latency["lifecycleFilters"] = _measure_lifecycle(state, name)
    return {
        "size": size,
        "tenant": name,
        "vectors": fill,
        "writeSeconds": None if write_s is None else round(write_s, 2),
        "writeEpisodesPerSec": None if write_s is None else round(size / write_s, 1),
        **latency,
    }


def _measure_lifecycle(state: BenchRun, name: str) -> dict[str, Any]:
    """Recall with and without the lifecycle filters (the bench tenant is retired in part)."""
    config = state.config
    store = state.open_store()
    try:
        key = auth.scope_key(Scope.model_validate(SCOPE))
        result = lifecycle_cost.measure(
            store.tenant(name),
            key,
            state.embedder.inner,
            queries(config.queries, config.seed + 1),
            limit=config.limit,
            seed=config.seed,
        )
    finally:
        store.close()
    for label, numbers in result.items():
        state.progress(
            f"  lifecycle filters ({label}): p50 {numbers['filtersOnMs']['p50']:.2f} ms "
            f"vs {numbers['filtersOffMs']['p50']:.2f} ms without "
            f"({numbers['overheadP50Percent']:+.1f}%)"
        )
    return result
