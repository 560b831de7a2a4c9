"""``engram bench bigscope``: recall when one scope holds up to a million memories, and a million
memories over a thousand scopes, on both backends.

For each layout (``one:N``: N memories in one scope; ``spread:N:S``: N over S scopes) and backend:

1. load the corpus (storage's ``bulk_load``: the write path's own rows, already embedded; a
   sample written both ways first checks that the two leave the same rows);
2. in process, with the server's default settings: the first recall of each scope asked (its
   copy loads), then the timed recalls (``core.recall.recall``, query vectors precomputed: the
   query embedding is timed apart) and each arm alone, and the whole recall's top 10 against the
   same recall on a store whose vector arm never turns approximate (the exact answer);
3. a real server (``engram serve``) started on the data: time to ``/readyz``, the first recall
   after that restart and the next ones over HTTP, and the server's peak RSS.

Ingest (``--ingest N``): the default embedder's own batch throughput on N corpus texts, then the
same texts through ``POST /v1/episodes/batch`` of a real server until every vector is ready,
interleaved twice. Every phase records the load average.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from engramdb.config import RetrievalSettings, Settings
from engramdb.core.reads import TimeTravel, lifecycle_filter
from engramdb.core.recall import lexical_terms, recall
from engramdb.errors import EngramError
from engramdb.storage.port import TenantStore
from engramdb_bench.bigscope_corpus import Corpus
from engramdb_bench.bigscope_load import bulk_load, same_rows
from engramdb_bench.bigscope_model import TENANT, Asked, Layout, Progress, Target, key_of, pct
from engramdb_bench.bigscope_server import measure_ingest, measure_restarts, measure_server
from engramdb_bench.lifecycle_cost import PrecomputedEmbedder
from engramdb_bench.machine import load_average, machine_info, source_info
from engramdb_bench.scale import postgres_server, shared_buffers_mb

_EXACT = {"ann_min_rows": 10**12}  # the reference: every vector scanned


def run(
    corpus: Corpus,
    backends: Sequence[str],
    layouts: Sequence[Layout],
    *,
    queries: int,
    pg_url: str | None,
    ingest: int,
    progress: Progress,
    seed: int = 7,
    probe_shares: Sequence[float] = (),
    restarts: int = 1,
) -> dict[str, Any]:
    """Measure every (backend, layout); start a throwaway PostgreSQL when none is given.
    ``probe_shares``: other shares of the lists to time and check, where a scope is searched by lists."""
    root = Path(tempfile.mkdtemp(prefix="engram-bigscope-"))
    root.chmod(0o755)
    results: list[dict[str, Any]] = []
    checks: dict[str, Any] = {}
    try:
        throwaway = "postgres" in backends and pg_url is None
        with postgres_server(root, pg_url if "postgres" in backends else None, throwaway) as url:
            for backend in backends:
                checks[backend] = same_rows(corpus, _target(backend, root, url, "check"), progress)
                for layout in layouts:
                    target = _target(backend, root, url, layout.name.replace(":", "_"))
                    progress(f"{backend} {layout.name}: loading")
                    results.append(
                        measure(
                            corpus,
                            target,
                            layout,
                            queries=queries,
                            seed=seed,
                            progress=progress,
                            pg_dir=root / "pg" if throwaway else None,
                            probe_shares=probe_shares,
                            restarts=restarts,
                        )
                    )
                    progress(f"  {_summary(results[-1])}")
        ingest_result = measure_ingest(corpus, root / "ingest", ingest, progress) if ingest else None
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {
        "benchmark": "bigscope",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_info(),
        "source": source_info(),
        "postgres": {"sharedBuffersMb": shared_buffers_mb()} if "postgres" in backends else None,
        "corpus": {"baseTurns": len(corpus.turns), "questions": len(corpus.questions), "model": corpus.model},
        "sameRowsCheck": checks,
        "results": results,
        "ingest": ingest_result,
    }


def _target(backend: str, root: Path, url: str | None, name: str) -> Target:
    home = root / f"{backend}-{name}"
    home.mkdir(parents=True, exist_ok=True)
    if backend == "sqlite":
        return Target("sqlite", home)
    return Target("postgres", home, url, f"big_{name}_{uuid.uuid4().hex[:6]}")


def _summary(result: dict[str, Any]) -> str:
    warm, server = result["recall"]["searchMs"], result.get("server", {})
    return (
        f"recall p50 {warm['p50']} p99 {warm['p99']} ms, recall@10 vs exact {result['recallAt10VsExact']}, "
        f"first after restart {server.get('firstRecallMs')} ms, server peak RSS {server.get('peakRssMb')} MB"
    )


# -- measuring -------------------------------------------------------------------------------


def measure(
    corpus: Corpus,
    target: Target,
    layout: Layout,
    *,
    queries: int,
    seed: int,
    progress: Progress,
    pg_dir: Path | None,
    probe_shares: Sequence[float] = (),
    restarts: int = 1,
) -> dict[str, Any]:
    store = target.open()
    try:
        load_s = bulk_load(store, corpus, layout, progress)
        progress(f"  loaded in {load_s:.0f} s; tidying")
        store.maintain()
    finally:
        store.close()
    asked = Asked.draw(corpus, layout, queries, seed)
    result: dict[str, Any] = {
        "backend": target.backend,
        "layout": layout.name,
        "total": layout.total,
        "scopes": layout.scopes,
        "load": {
            "seconds": round(load_s, 1),
            "rowsPerSecond": round(layout.total / load_s),
            "path": "bulk_load (bench only)",
        },
        "diskMb": _disk_mb(target, pg_dir),
    }
    exact_ms, exact_tops = _exact_tops(target, asked)
    result.update(_in_process(target, asked, progress, exact_tops))
    result["exactPath"] = {"searchMs": pct(exact_ms), "settings": _EXACT}
    result["probeShares"] = []
    for share in probe_shares if layout.total // layout.scopes >= Settings().ann_min_rows else ():
        other = _in_process(target, asked, progress, exact_tops, ann_probe_share=share)
        result["probeShares"].append(
            {
                "share": share,
                "searchMs": other["recall"]["searchMs"],
                "denseArmMs": other["recall"]["denseArmMs"],
                "recallAt10VsExact": other["recallAt10VsExact"],
            }
        )
    result["server"] = measure_server(target, asked, progress, touch_all=layout.scopes > 1)
    if restarts > 1:
        result["restarts"] = measure_restarts(target, asked, progress, restarts)
    return result


def _in_process(
    target: Target, asked: Asked, progress: Progress, exact_tops: list[list[str]], **options: Any
) -> dict[str, Any]:
    """First and warm recall times, each arm alone, and the top 10 against the exact reference."""
    filt = lifecycle_filter(TimeTravel(), sources=("EPISODE", "MEMORY_FACT"))
    settings, embedder = RetrievalSettings(), asked.embedder()
    load_before = load_average()
    timings: dict[str, list[float]] = {"first": [], "search": [], "dense": [], "lexical": []}
    tops: list[list[str]] = []
    found: list[int] = []  # the vector arm's candidates per query
    store = target.open(**options)
    try:
        tenant = store.tenant(TENANT)
        seen: set[int] = set()
        for scope, text in zip(asked.scopes, asked.texts, strict=True):  # each scope's first recall loads it
            if scope not in seen:
                seen.add(scope)
                timings["first"].append(_timed_recall(tenant, embedder, key_of(scope), text, filt, settings)[0])
        for scope, text, vector in zip(asked.scopes, asked.texts, asked.vectors, strict=True):
            ms, top = _timed_recall(tenant, embedder, key_of(scope), text, filt, settings)
            timings["search"].append(ms)
            tops.append(top)
            key, terms = key_of(scope), lexical_terms(text)
            started = time.perf_counter()
            dense = tenant.vector_candidates(key, vector, replace(filt, vector_model=embedder.model_id), 200)
            timings["dense"].append((time.perf_counter() - started) * 1000)
            found.append(len(dense))
            timings["lexical"].append(_ms(lambda: tenant.text_candidates(key, terms, filt, 200)))  # noqa: B023
        progress(f"  in process: search p50 {np.percentile(timings['search'], 50):.1f} ms")
        if not any(found):  # a vector arm that finds nothing would make every number here a lexical one
            raise EngramError(f"the vector arm found nothing: are the stored vectors of model {embedder.model_id}?")
    finally:
        store.close()
    overlap = [len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(tops, exact_tops, strict=True)]
    return {
        "settings": options,
        "recall": {
            "searchMs": pct(timings["search"]),
            "firstRecallOfScopeMs": pct(timings["first"]),
            "denseArmMs": pct(timings["dense"]),
            "lexicalArmMs": pct(timings["lexical"]),
            "queries": len(asked.texts),
            "scopesAsked": len(timings["first"]),
            "denseCandidatesMean": round(float(np.mean(found)), 1),
        },
        "recallAt10VsExact": round(float(np.mean(overlap)), 4),
        "queryEmbedMs": _embed_ms(asked),
        "loadAverage": {"before": load_before, "after": load_average()},
    }


def _timed_recall(
    tenant: TenantStore, embedder: PrecomputedEmbedder, key: str, text: str, filt: Any, settings: RetrievalSettings
) -> tuple[float, list[str]]:
    started = time.perf_counter()
    with tenant.reading() as reader:
        outcome = recall(reader, embedder, scope_key=key, query=text, filt=filt, limit=10, settings=settings)
    return (time.perf_counter() - started) * 1000, [h.record.memory_id for h in outcome.hits]


def _exact_tops(target: Target, asked: Asked) -> tuple[list[float], list[list[str]]]:
    """The exact answer: each query's top 10 from a store whose vector arm scans every row (its
    warm times too, after one pass that loads the scopes)."""
    filt = lifecycle_filter(TimeTravel(), sources=("EPISODE", "MEMORY_FACT"))
    settings, embedder = RetrievalSettings(), asked.embedder()
    store = target.open(**_EXACT, memory_mb=8192)
    try:
        tenant = store.tenant(TENANT)
        asks = list(zip(asked.scopes, asked.texts, strict=True))
        for s, t in asks:  # loads the scopes (PostgreSQL: the first search finds a scope large)
            _timed_recall(tenant, embedder, key_of(s), t, filt, settings)
        answers = [_timed_recall(tenant, embedder, key_of(s), t, filt, settings) for s, t in asks]
        return [ms for ms, _ in answers], [top for _, top in answers]
    finally:
        store.close()


def _embed_ms(asked: Asked) -> dict[str, float]:
    from engramdb.core.embedding import make_embedder

    model = make_embedder("minilm")
    model.embed(["load"])
    return pct([_ms(lambda: model.embed([t])) for t in asked.texts[:100]])  # noqa: B023


def _ms(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return (time.perf_counter() - started) * 1000


def _disk_mb(target: Target, pg_dir: Path | None) -> float | None:
    folder = target.home if target.backend == "sqlite" else pg_dir
    if folder is None:
        return None
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20, 1)
