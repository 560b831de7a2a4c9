"""``engram bench records``: the knowledge plane's where-queries and bulk imports, both backends.

For each backend: ``records`` records go into ONE scope through ``write_records`` (PROJECTs, each
with nine nested TASKs: the children link to their project by ``HAS_TASK``), the store is tidied
once (``Store.maintain()``), and ``queries`` seeded searches run through the service, each a
nested where over two labels with three conditions::

    {"labels": ["TASK"], "where": {"status": s, "priority": {"$gte": p}, "PROJECT": {"region": r}},
     "limit": 20}

Reported: p50/p95/p99 of the whole ``search_records`` call answering the page of 20 newest first,
and of the same call asked to count every match (``count: true``) as well. Then the bulk import:
``import_records`` nested records (projects with their tasks, ``mergeBy`` on the project's name)
written into a fresh scope in writes of 1,000 records (a write's limit), and the same writes again,
which must change nothing (created 0): both timed.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engramdb.config import Settings
from engramdb.contract.canonical import hash_scope
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.models.knowledge import RecordSearch, RecordWrite
from engramdb_bench.scale import bench_home, memory_mb, open_backend, shared_buffers_mb

BACKENDS = ("sqlite", "postgres")
TASKS_PER_PROJECT = 9
WRITE_BATCH = 100  # projects per write_records call while loading (1,000 records)
REGIONS = ("eu-west", "eu-north", "us-east", "us-west", "apac-south", "apac-east", "latam", "africa")
STATUSES = ("open", "done", "blocked", "review")
_VERBS = "write review migrate test document deploy design measure fix rename".split()
_NOUNS = "invoice ledger login search cache export billing report queue webhook".split()
Progress = Callable[[str], None]
OPERATOR = Caller(tenant="bench", key_id="bench-operator", role="admin")


def run(
    backends: Sequence[str],
    *,
    records: int,
    queries: int,
    import_records: int,
    pg_url: str | None,
    seed: int,
    progress: Progress,
) -> dict[str, Any]:
    """Measure every backend; start a throwaway PostgreSQL when none is given."""
    results = []
    with bench_home("engram-records-", backends, pg_url) as (home, url, throwaway):
        for backend in backends:
            progress(f"{backend}: {records:,} records in one scope")
            results.append(
                measure(
                    backend,
                    home=home,
                    pg_url=url,
                    records=records,
                    queries=queries,
                    import_records=import_records,
                    seed=seed,
                    progress=progress,
                )
            )
    return {
        "benchmark": "records",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "memoryMb": memory_mb(),
        },
        "postgres": {"throwaway": throwaway, "sharedBuffersMb": shared_buffers_mb() if throwaway else None}
        if "postgres" in backends
        else None,
        "query": "labels [TASK], where {status, priority $gte, PROJECT {region}}, limit 20 (two labels, three "
        "conditions)",
        "results": results,
    }


def measure(
    backend: str,
    *,
    home: Path,
    pg_url: str | None,
    records: int,
    queries: int,
    import_records: int,
    seed: int,
    progress: Progress,
) -> dict[str, Any]:
    store = open_backend(backend, home / backend, pg_url, "records")
    try:
        store.tenant(OPERATOR.tenant, create=True)
        service = MemoryService(store, HashingEmbedder(), Settings(home=home / backend, embedder="hashing"))
        rng = random.Random(seed)
        started = time.perf_counter()
        projects = max(1, records // (TASKS_PER_PROJECT + 1))
        for first in range(0, projects, WRITE_BATCH):
            batch = [_project(i, rng) for i in range(first, min(projects, first + WRITE_BATCH))]
            service.record_writes.write_records(OPERATOR, _write(batch, _scope("load")))
        load_s = time.perf_counter() - started
        progress(f"  loaded {projects * (TASKS_PER_PROJECT + 1):,} records in {load_s:.1f} s")
        store.maintain()
        searches = [_search(rng) for _ in range(queries + 5)]
        for search in searches[:5]:  # warm-up
            service.record_reads.search_records(OPERATOR, search)
        timings, counted, matched = _time_searches(service, searches[5:])
        progress(
            f"  where p50 {_pct(timings, 50):.2f} ms, p99 {_pct(timings, 99):.2f} ms; "
            f"with the count p50 {_pct(counted, 50):.2f} ms"
        )
        imported = _import(service, import_records, rng)
        progress(
            f"  import {imported['records']:,} records: {imported['firstS']:.2f} s, "
            f"again {imported['againS']:.2f} s (created {imported['againCreated']})"
        )
        return {
            "backend": backend,
            "records": projects * (TASKS_PER_PROJECT + 1),
            "loadS": round(load_s, 2),
            "loadRecordsPerS": round(projects * (TASKS_PER_PROJECT + 1) / load_s, 1),
            "queries": queries,
            "whereP50Ms": _pct(timings, 50),
            "whereP95Ms": _pct(timings, 95),
            "whereP99Ms": _pct(timings, 99),
            "countedP50Ms": _pct(counted, 50),
            "countedP95Ms": _pct(counted, 95),
            "countedP99Ms": _pct(counted, 99),
            "matchedMedian": sorted(matched)[len(matched) // 2],
            "import": imported,
        }
    finally:
        store.close()


def _time_searches(service: MemoryService, searches: list[RecordSearch]) -> tuple[list[float], list[float], list[int]]:
    """Ask each where-query as it is and with the count; return both times (ms) and the counts."""
    timings, counted, matched = [], [], []
    for search in searches:
        began = time.perf_counter()
        service.record_reads.search_records(OPERATOR, search)
        timings.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        matched.append(
            service.record_reads.search_records(OPERATOR, search.model_copy(update={"count": True})).total or 0
        )
        counted.append((time.perf_counter() - began) * 1000)
    return timings, counted, matched


def _import(service: MemoryService, count: int, rng: random.Random) -> dict[str, Any]:
    """A nested import of ``count`` records into a fresh scope, in writes of ``WRITE_BATCH`` projects (a
    write takes at most 1,000 records), then the same import again."""
    projects = [_project(i, rng) for i in range(max(1, count // (TASKS_PER_PROJECT + 1)))]
    bodies = [_write(projects[i : i + WRITE_BATCH], _scope("import")) for i in range(0, len(projects), WRITE_BATCH)]
    began = time.perf_counter()
    first = [service.record_writes.write_records(OPERATOR, body) for body in bodies]
    first_s = time.perf_counter() - began
    began = time.perf_counter()
    again = [service.record_writes.write_records(OPERATOR, body) for body in bodies]
    again_s = time.perf_counter() - began
    return {
        "records": sum(w.created for w in first),
        "writes": len(bodies),
        "firstS": round(first_s, 3),
        "againS": round(again_s, 3),
        "againCreated": sum(w.created for w in again),
        "againUnchanged": sum(w.unchanged for w in again),
    }


def _project(i: int, rng: random.Random) -> dict[str, Any]:
    tasks = [
        {
            "title": f"{rng.choice(_VERBS)} the {rng.choice(_NOUNS)} {rng.choice(_NOUNS)} ({i}.{t})",
            "status": rng.choice(STATUSES),
            "priority": rng.randint(1, 5),
            "assignee": f"person-{rng.randrange(50)}",
            "dueDate": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T12:00:00Z",
        }
        for t in range(TASKS_PER_PROJECT)
    ]
    return {
        "name": f"project-{i}",
        "region": rng.choice(REGIONS),
        "budget": rng.randrange(10_000, 1_000_000),
        "TASK": tasks,
    }


def _write(projects: list[dict[str, Any]], scope: dict[str, Any]) -> RecordWrite:
    return RecordWrite.model_validate({"label": "PROJECT", "data": projects, "mergeBy": ["name"], "scope": scope})


def _search(rng: random.Random) -> RecordSearch:
    where = {
        "status": rng.choice(STATUSES),
        "priority": {"$gte": rng.randint(2, 5)},
        "PROJECT": {"region": rng.choice(REGIONS)},
    }
    return RecordSearch.model_validate({"labels": ["TASK"], "where": where, "limit": 20, "scope": _scope("load")})


def _scope(name: str) -> dict[str, Any]:
    return {
        "agentId": "bench",
        "profileId": "records",
        "privacyScope": "private",
        "participantScopeHash": hash_scope([name]),
        "sandboxEligible": False,
    }


def _pct(values: Sequence[float], percentile: int) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * percentile / 100))], 3)
