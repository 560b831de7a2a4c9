"""``engram bench langgraph``: LangGraph's store over EngramDB with ``items`` items in one namespace.

For each backend: a real server on loopback (the app ``engram serve`` runs, with its embedding
job), one participant's namespace of ``items`` items loaded at once in the store's own format
(engramdb_bench.langgraph_load), the store tidied once (``Store.maintain()``), then each kind of
call timed ``queries`` times through ``EngramStore`` over HTTP, as a graph's node makes it::

    newest       search(ns, limit=10)                        the newest ten
    filter       search(ns, filter={"color": "red"})         a third of the items match
    rare filter  search(ns, filter={"n": {"$gte": N - 5}})   five match: every item is read
    query        search(ns, query=q, limit=10)               the namespace ranked (a new q each time)
    query+filter search(ns, query=q, filter={"color": "red"})
    deep page    search(ns, limit=10, offset=N // 2)
    query page   search(ns, query=q, limit=10, offset=990)
    get          get(ns, key)
    list         list_namespaces(prefix=ns[:1])

Queries are new each time (three of the corpus's words and a number), so none is answered from the
server's cache of query vectors. Reported: p50/p95/p99 per kind, in milliseconds.
"""

from __future__ import annotations

import datetime as dt
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engramdb.api.loopback import LoopbackServer
from engramdb.api.rest import create_app
from engramdb.config import Settings
from engramdb.core import auth
from engramdb.core.embedding import make_embedder
from engramdb.integrations.langgraph import EngramStore
from engramdb.integrations.target import Scoped, open_target
from engramdb_bench.langgraph_load import load_items
from engramdb_bench.latency_timing import percentiles
from engramdb_bench.machine import machine_info
from engramdb_bench.scale import bench_home, open_backend, shared_buffers_mb

BACKENDS = ("sqlite", "postgres")
TENANT = "bench"
NAMESPACE = ("bench", "items")
WORDS = (
    "apple pie banana bread tea coffee garden rain music piano travel paris budget review meeting code python "
    "rust sleep running invoice ledger deploy release"
).split()
Progress = Callable[[str], None]
Call = Callable[[EngramStore, int], object]


def run(
    backends: Sequence[str],
    *,
    items: int,
    queries: int,
    embedder: str,
    pg_url: str | None,
    seed: int,
    progress: Progress,
) -> dict[str, Any]:
    """Measure every backend; start a throwaway PostgreSQL when none is given."""
    results = []
    with bench_home("engram-langgraph-", backends, pg_url) as (home, url, throwaway):
        for backend in backends:
            progress(f"{backend}: {items:,} items in one namespace, embedder {embedder}")
            results.append(measure(backend, home / backend, url, items, queries, embedder, seed, progress))
    return {
        "benchmark": "langgraph",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_info(),
        "postgres": {"throwaway": throwaway, "sharedBuffersMb": shared_buffers_mb() if throwaway else None}
        if "postgres" in backends
        else None,
        "items": items,
        "queriesPerKind": queries,
        "embedder": embedder,
        "results": results,
    }


def measure(
    backend: str, home: Path, pg_url: str | None, items: int, queries: int, embedder: str, seed: int, progress: Progress
) -> dict[str, Any]:
    """Load one namespace behind a real server on loopback and time each kind of call through the store."""
    home.mkdir(parents=True, exist_ok=True)
    store = open_backend(backend, home, pg_url, "langgraph")
    settings = Settings(home=home, embedder=embedder)
    model = make_embedder(embedder)
    server = LoopbackServer(create_app(settings, store=store, embedder=model))
    server.start()
    try:
        token, _ = auth.create_key(
            store, tenant=TENANT, role="host", grant={"agentId": "bench", "profileId": "default"}, create_tenant=True
        )
        lg = EngramStore(server.url, api_key=token, tenant=TENANT, agent_id="bench", user_id="reader")
        rng = random.Random(seed)
        started = time.perf_counter()
        scope = Scoped(open_target(server.url, token), agent_id="bench", profile_id="default").scope("reader")
        load_items(store.tenant(TENANT), model, scope, [(NAMESPACE, f"k{i}", _value(i, rng)) for i in range(items)])
        load_s = time.perf_counter() - started
        store.maintain()
        progress(f"  loaded in {load_s:.1f} s")
        timings = {name: _time(lg, call, queries) for name, call in _calls(items, seed).items()}
        for name, values in timings.items():
            progress(f"  {name:13s} p50 {values['p50']:7.2f} ms   p95 {values['p95']:7.2f} ms")
        lg.close()
        return {"backend": backend, "items": items, "loadS": round(load_s, 2), "timingsMs": timings}
    finally:
        server.stop()


def _calls(items: int, seed: int) -> dict[str, Call]:
    rng = random.Random(seed + 1)
    words = [" ".join(rng.sample(WORDS, 3)) for _ in range(1_000)]

    def query(i: int, kind: str) -> str:  # never the same twice: no answer from the query vector cache
        return f"{words[i % len(words)]} {kind} {i}"

    return {
        "newest": lambda lg, i: lg.search(NAMESPACE, limit=10),
        "filter": lambda lg, i: lg.search(NAMESPACE, filter={"color": "red"}, limit=10),
        "rare filter": lambda lg, i: lg.search(NAMESPACE, filter={"n": {"$gte": items - 5}}, limit=10),
        "query": lambda lg, i: lg.search(NAMESPACE, query=query(i, "q"), limit=10),
        "query+filter": lambda lg, i: lg.search(NAMESPACE, query=query(i, "f"), filter={"color": "red"}, limit=10),
        "deep page": lambda lg, i: lg.search(NAMESPACE, limit=10, offset=items // 2),
        "query page": lambda lg, i: lg.search(NAMESPACE, query=query(i, "p"), limit=10, offset=990),
        "get": lambda lg, i: lg.get(NAMESPACE, f"k{(i * 7919) % items}"),
        "list": lambda lg, i: lg.list_namespaces(prefix=NAMESPACE[:1]),
    }


def _time(lg: EngramStore, call: Call, queries: int) -> dict[str, float]:
    for i in range(5):  # warm-up: the scope's in-memory copy, connections, the query path
        call(lg, 90_000 + i)
    taken = []
    for i in range(queries):
        started = time.perf_counter()
        call(lg, i)
        taken.append((time.perf_counter() - started) * 1000)
    return percentiles(taken)


def _value(i: int, rng: random.Random) -> dict[str, Any]:
    return {"text": " ".join(rng.choice(WORDS) for _ in range(8)), "color": ("red", "green", "blue")[i % 3], "n": i}
