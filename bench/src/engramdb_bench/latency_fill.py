"""Filling the recall benchmark's tenants: the corpus through the production bulk write path,
then a vector for every row through the embedding worker's own ``save_embeddings`` call.

Vectors come from the real embedder (``full``), or, when that would take longer than the
budget, from a pool of real embeddings plus noise (``pool``, see :func:`pool_vectors`).
"""

from __future__ import annotations

import shutil
import time
from typing import Any

import numpy as np

from engramdb import clock
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import l2_normalize
from engramdb.core.service import MemoryService
from engramdb.errors import EngramError
from engramdb.jobs.embedding import drain
from engramdb.storage.port import EmbedJob, TenantStore
from engramdb_bench.latency_config import BenchRun
from engramdb_bench.synthetic_corpus import episode_bodies


def measure_ingest(state: BenchRun) -> dict[str, Any]:
    """End-to-end ingest throughput: bulk writes, then the embedding job drains every row."""
    n = state.config.ingest_sample
    folder = state.home / "ingest-sample"
    shutil.rmtree(folder, ignore_errors=True)
    store = state.open_store(folder)
    try:
        store.tenant("ingest", create=True)
        service = MemoryService(store, state.embedder, state.settings)
        state.progress(f"ingest sample: {n:,} episodes with {state.embedder.model_id}")
        state.embedder.inner.embed(["load the model before timing"])  # not part of the pool
        write_s, created = write_corpus(state, service, "ingest", n, "ingest sample")
        t0 = time.perf_counter()
        drained = drain(store.tenant("ingest"), state.embedder, state.settings.embed_batch_size)
        embed_s = time.perf_counter() - t0
        counts = store.tenant("ingest").embedding_counts()
    finally:
        store.close()
        shutil.rmtree(folder, ignore_errors=True)
    if created != n or counts["ready"] != n:
        raise EngramError(f"ingest sample: created {created}, ready {counts['ready']} of {n}")
    result = _ingest_rates(state, write_s, embed_s, drained)
    state.progress(
        f"  ingest: write {result['writeEpisodesPerSec']:,}/s, embed "
        f"{result['embedEpisodesPerSec']:,}/s, end to end {result['endToEndEpisodesPerSec']:,}/s"
    )
    return result


def _ingest_rates(state: BenchRun, write_s: float, embed_s: float, drained: int) -> dict[str, Any]:
    n = state.config.ingest_sample
    return {
        "episodes": n,
        "embedder": state.embedder.model_id,
        "writeBatch": state.config.batch_size,
        "embedBatch": state.settings.embed_batch_size,
        "writeSeconds": round(write_s, 3),
        "embedSeconds": round(embed_s, 3),
        "drained": drained,
        "writeEpisodesPerSec": round(n / write_s, 1),
        "embedEpisodesPerSec": round(n / embed_s, 1),
        "endToEndEpisodesPerSec": round(n / (write_s + embed_s), 1),
    }


def fill_tenant(state: BenchRun, name: str, size: int, mode: str) -> tuple[dict[str, Any], float | None]:
    """Give tenant ``name`` the first ``size`` corpus episodes and their vectors, or reuse it if it
    already holds exactly them; return the vector report and the write seconds (None if reused)."""
    store = state.open_store()
    fill: dict[str, Any] = {"mode": mode}
    try:
        exists = name in store.tenant_names()
        tenant = store.tenant(name, create=True)
        counts = tenant.embedding_counts()
        if exists and counts == {"pending": 0, "ready": size, "failed": 0}:
            state.progress("  reusing the existing tenant (same size, seed and vector mode)")
            fill["reused"] = True
            return fill, None
        if exists and any(counts.values()):
            raise EngramError(f"tenant {name} in {state.home} holds other data; use a fresh --home")
        service = MemoryService(store, state.embedder, state.settings)
        write_s, created = write_corpus(state, service, name, size, f"size {size:,}")
        if created != size:
            raise EngramError(f"size {size}: only {created} episodes were new")
        state.progress(f"  wrote {size:,} episodes in {write_s:.1f} s; filling vectors")
        t0 = time.perf_counter()
        fill.update(fill_vectors(state, tenant, mode, state.embedder.model_id))
        fill["seconds"] = round(time.perf_counter() - t0, 2)
        return fill, write_s
    finally:
        store.close()


def write_corpus(state: BenchRun, service: MemoryService, tenant: str, n: int, label: str) -> tuple[float, int]:
    """Write ``n`` corpus episodes through ``write_episodes``; return (seconds, created)."""
    caller = Caller(tenant=tenant, key_id="bench", role="admin")
    size = state.config.batch_size
    created, seconds = 0, 0.0
    batch: list[dict[str, Any]] = []
    last_report = time.perf_counter()
    for body in episode_bodies(n, state.config.seed):
        batch.append(body)
        if len(batch) == size:
            t0 = time.perf_counter()
            created += _write(service, caller, batch)
            seconds += time.perf_counter() - t0
            batch = []
            if time.perf_counter() - last_report > 10:
                state.progress(f"  {label}: wrote {created:,}/{n:,}")
                last_report = time.perf_counter()
    if batch:
        t0 = time.perf_counter()
        created += _write(service, caller, batch)
        seconds += time.perf_counter() - t0
    return seconds, created


def _write(service: MemoryService, caller: Caller, bodies: list[dict[str, Any]]) -> int:
    writes = [EpisodeWrite.model_validate(body) for body in bodies]
    responses = service.writes.write_episodes(caller, writes)
    return sum(1 for r in responses if r.created)


def vector_mode(state: BenchRun, size: int, embed_rate: float) -> str:
    """Return ``full`` or ``pool``: the configured mode, or in ``auto`` whether embedding fits the budget."""
    if state.config.vectors != "auto":
        return state.config.vectors
    # The first ``ingest_sample`` texts of the corpus are already embedded (same seed).
    to_embed = max(0, size - state.config.ingest_sample)
    return "full" if to_embed / embed_rate <= state.config.full_embed_budget_s else "pool"


def fill_vectors(state: BenchRun, tenant: TenantStore, mode: str, model: str) -> dict[str, Any]:
    """Give every pending row a vector through ``save_embeddings`` (the worker's own call)."""
    pool_texts = list(state.embedder.vectors)
    pool = np.stack([state.embedder.vectors[t] for t in pool_texts]).astype(np.float32)
    rng = np.random.default_rng(state.config.seed)
    counts = {"exact": 0, "embedded": 0, "perturbed": 0}
    while jobs := tenant.embedding_jobs(5_000, clock.now_text()):
        vectors = _job_vectors(state, jobs, mode, pool, rng, counts)
        tenant.save_embeddings([job.rowid for job in jobs], vectors, model)
        state.progress(f"  vectors: {sum(counts.values()):,} saved")
    return {
        "exactFromIngestSample": counts["exact"],
        "embedded": counts["embedded"],
        "perturbedFromPool": counts["perturbed"],
        "poolSize": len(pool_texts) if mode == "pool" else None,
    }


def _job_vectors(
    state: BenchRun,
    jobs: list[EmbedJob],
    mode: str,
    pool: np.ndarray,
    rng: np.random.Generator,
    counts: dict[str, int],
) -> np.ndarray:
    """Return the jobs' vectors: a text's own from the ingest sample, else embedded or from the pool."""
    vectors = np.zeros((len(jobs), pool.shape[1]), dtype=np.float32)
    missing: list[int] = []
    for i, job in enumerate(jobs):
        known = state.embedder.vectors.get(job.text)
        if known is not None:
            vectors[i] = known
            counts["exact"] += 1
        else:
            missing.append(i)
    if missing and mode == "full":
        vectors[missing] = state.embedder.inner.embed([jobs[i].text for i in missing])
        counts["embedded"] += len(missing)
    elif missing:
        vectors[missing] = pool_vectors(pool, len(missing), state.config.pool_noise, rng)
        counts["perturbed"] += len(missing)
    return vectors


def pool_vectors(pool: np.ndarray, n: int, noise: float, rng: np.random.Generator) -> np.ndarray:
    """Return ``n`` unit vectors: a random real pool vector plus isotropic Gaussian noise.

    The noise has expected norm ``noise`` (per-dimension sigma ``noise / sqrt(dim)``), so each
    vector keeps a cosine of about ``1 / sqrt(1 + noise**2)`` (0.94 for 0.35) with its base: the
    scope looks like ``len(pool)`` topical clusters of near-paraphrases, as real MiniLM vectors
    of conversational turns do, instead of uniformly random directions.
    """
    base = pool[rng.integers(0, len(pool), size=n)]
    sigma = noise / np.sqrt(pool.shape[1])
    return l2_normalize(base + rng.standard_normal(base.shape, dtype=np.float32) * sigma)
