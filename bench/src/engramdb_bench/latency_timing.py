"""Timing the recall benchmark's query set through ``MemoryService.recall`` on a timed store.

The store is reopened (empty vector cache), one warm-up query loads the scope (reported as the
cold load), then every query is timed: the service's own ``timings`` (``searchMs`` is everything
after the query embedding), each storage call recall makes, and this thread's CPU time.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.recall import RecallRequest
from engramdb_bench.latency_config import BenchRun, Progress
from engramdb_bench.machine import load_average
from engramdb_bench.synthetic_corpus import SCOPE, queries
from engramdb_bench.timed_store import Clock, TimedEmbedder, TimedStore

WARM_UP = "warm-up: what did I plan in Lisbon with my sister?"
Row = dict[str, float]


def measure_latency(state: BenchRun, name: str, size: int) -> dict[str, Any]:
    """Reopen the store (cold vector cache), warm up once, then time the query set."""
    query_set = queries(state.config.queries, state.config.seed)
    store = TimedStore(state.open_store())
    try:
        asker = _Asker(state, store, name)
        cold, _, _ = asker.ask(WARM_UP)
        state.progress(f"  cold load (first query): search {cold['searchMs']:.1f} ms")
        rows, loop = _time_queries(asker, query_set)
        profile = None
        if state.config.profile_dir is not None:
            path = state.config.profile_dir / f"recall_{size}.prof"
            profile = _profile(path, lambda: [asker.ask(q) for q in query_set], state.progress)
    finally:
        store.close()
    result = summarise_rows(rows, query_set, cold)
    search = result["searchMs"]
    state.progress(f"  search p50 {search['p50']:.2f} ms, p95 {search['p95']:.2f} ms, p99 {search['p99']:.2f} ms")
    # A process CPU time well below (or above) wall time means waiting for a core (or helper
    # threads spinning): other load on the machine makes the percentiles worse than they are.
    result["queryLoop"] = {**loop, "loadAverageAfter": load_average()}
    if profile is not None:
        result["profile"] = profile
    return result


class _Asker:
    """Asks one query through the production recall path and collects every timing of it."""

    def __init__(self, state: BenchRun, store: TimedStore, name: str) -> None:
        self.embedder = TimedEmbedder(state.embedder.inner)
        self.service = MemoryService(store, self.embedder, state.settings)
        self.caller = Caller(tenant=name, key_id="bench", role="admin")
        self.tenant = store.timed_tenant(name)
        self.limit = state.config.limit

    def ask(self, query: str) -> tuple[Row, float, int]:
        """Return the query's timings, the service's wall time in ms and the number of hits."""
        request = RecallRequest.model_validate({"query": query, "limit": self.limit, "scope": SCOPE})
        clocked: Row = {}
        with Clock(clocked, "service"):
            response = self.service.reads.recall(self.caller, request)
        timings = {**response.timings, **self.tenant.last, **self.embedder.last}
        timings["serverCpuMs"] = clocked["serviceCpuMs"] - self.embedder.last["embedWrappedCpuMs"]
        return timings, clocked["serviceMs"], len(response.memories)


def _time_queries(asker: _Asker, query_set: Sequence[str]) -> tuple[list[Row], dict[str, Any]]:
    """Return one row of timings per query and the loop's wall and process CPU time."""
    rows: list[Row] = []
    load_before, wall0, cpu0 = load_average(), time.perf_counter(), time.process_time()
    for query in query_set:
        timings, total, hits = asker.ask(query)
        timings["serviceMs"] = total
        timings["hits"] = hits
        rows.append(timings)
    loop = {
        "wallSeconds": round(time.perf_counter() - wall0, 3),
        "cpuSeconds": round(time.process_time() - cpu0, 3),
        "loadAverageBefore": load_before,
    }
    return rows, loop


def summarise_rows(rows: Sequence[Row], query_set: Sequence[str], cold: Row) -> dict[str, Any]:
    """Return the percentiles of every timing, the candidate counts and the slowest queries."""
    server = [r["serviceMs"] - r["embedMs"] for r in rows]
    return {
        "coldLoadMs": round(cold["searchMs"], 3),
        "coldLoad": {k: round(v, 3) for k, v in cold.items()},
        "searchMs": percentiles(_column(rows, "searchMs")),
        "embedMs": percentiles(_column(rows, "embedMs")),
        "serviceMinusEmbedMs": percentiles(server),
        "breakdownMs": _breakdown(rows),
        # This thread's CPU time (not inflated by waiting for a core; misses BLAS helpers).
        "cpuMs": {
            "serverMinusEmbed": percentiles(_column(rows, "serverCpuMs")),
            "dense": percentiles(_column(rows, "denseCpuMs")),
            "lexical": percentiles(_column(rows, "lexicalCpuMs")),
            "records": percentiles(_column(rows, "recordsCpuMs")),
        },
        "candidates": {
            "lexicalMean": _mean(_column(rows, "lexicalHits")),
            "denseMean": _mean(_column(rows, "denseHits")),
            "recordsMean": _mean(_column(rows, "records")),
            "hitsMean": _mean(_column(rows, "hits")),
        },
        "slowestQueries": _slowest(rows, query_set),
    }


def _breakdown(rows: Sequence[Row]) -> dict[str, dict[str, float]]:
    other = [
        r["searchMs"] - r.get("denseMs", 0) - r.get("lexicalMs", 0) - r.get("recordsMs", 0) - r.get("neighboursMs", 0)
        for r in rows
    ]
    return {
        "dense": percentiles(_column(rows, "denseMs")),
        "lexical": percentiles(_column(rows, "lexicalMs")),
        "records": percentiles(_column(rows, "recordsMs")),
        "neighbours": percentiles(_column(rows, "neighboursMs")),
        "fusionAndFeatures": percentiles(other),
    }


def _slowest(rows: Sequence[Row], query_set: Sequence[str], n: int = 5) -> list[dict[str, Any]]:
    ranked = sorted(zip(rows, query_set, strict=True), key=lambda x: -x[0]["searchMs"])[:n]
    return [
        {
            "query": q,
            "searchMs": round(r["searchMs"], 3),
            "lexicalMs": round(r.get("lexicalMs", 0), 3),
            "lexicalHits": r.get("lexicalHits"),
        }
        for r, q in ranked
    ]


def _column(rows: Sequence[Row], key: str) -> list[float]:
    return [r[key] for r in rows if key in r]


def _mean(values: Sequence[float]) -> float:
    return round(float(np.mean(values)), 1)


def percentiles(values: Sequence[float], points: Sequence[int] = (50, 95, 99)) -> dict[str, float]:
    """Return ``{"p50": .., "p95": .., "p99": .., "mean": .., "max": ..}`` rounded to µs."""
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        return {}
    out = {f"p{p}": round(float(np.percentile(array, p)), 3) for p in points}
    out["mean"] = round(float(array.mean()), 3)
    out["max"] = round(float(array.max()), 3)
    return out


def _profile(path: Path, work: Callable[[], object], progress: Progress) -> dict[str, Any]:
    """Run the query set again under cProfile (a separate pass: the timed numbers stay clean)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    profiler = cProfile.Profile()
    profiler.enable()
    work()
    profiler.disable()
    profiler.dump_stats(path)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(15)
    progress(f"  profile written to {path}")
    return {"path": str(path), "topByTottime": text.getvalue()}
