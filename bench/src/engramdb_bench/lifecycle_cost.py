"""What the lifecycle filters cost recall: the same queries with and without them.

Both runs go through the production recall function with precomputed query vectors (so the
embedder is out of the measurement) and alternate query by query (so drift in machine load hits
both alike). "Off" is a filter that admits any status and ignores time; "on" is what recall uses
by default (active, not past validUntil). The second pass retires a fifth of the scope first, so
the filters have real work to do.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from engramdb import clock
from engramdb.config import RetrievalSettings
from engramdb.core.auth import Caller
from engramdb.core.embedding import Embedder, FloatMatrix
from engramdb.core.reads import TimeTravel, lifecycle_filter
from engramdb.core.recall import recall
from engramdb.storage.port import CandidateFilter, TenantStore

NO_FILTER = CandidateFilter(statuses=None)


class PrecomputedEmbedder:
    """An embedder that answers from vectors computed beforehand."""

    def __init__(self, vectors: dict[str, np.ndarray], model_id: str) -> None:
        self._vectors = vectors
        self.model_id = model_id
        self.dimension = next(iter(vectors.values())).shape[0]

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        return np.stack([self._vectors[t] for t in texts])


def measure(
    tenant: TenantStore,
    scope_key: str,
    embedder: Embedder,
    queries: Sequence[str],
    *,
    limit: int = 8,
    retire_fraction: float = 0.2,
    seed: int = 7,
) -> dict[str, Any]:
    """Return p50/p99 with and without the lifecycle filters, before and after retiring rows."""
    vectors = dict(zip(queries, embedder.embed(list(queries)), strict=True))
    fixed = PrecomputedEmbedder(vectors, embedder.model_id)
    passes = {"allActive": _compare(tenant, scope_key, fixed, queries, limit)}
    retired = _retire(tenant, scope_key, retire_fraction, seed)
    passes[f"{int(retire_fraction * 100)}PercentRetired"] = {
        **_compare(tenant, scope_key, fixed, queries, limit),
        "retiredRows": retired,
    }
    return passes


def _compare(
    tenant: TenantStore, scope_key: str, embedder: Embedder, queries: Sequence[str], limit: int
) -> dict[str, Any]:
    settings = RetrievalSettings()
    on = lifecycle_filter(TimeTravel(), sources=("EPISODE", "MEMORY_FACT"))
    timings: dict[str, list[float]] = {"on": [], "off": []}
    for query in queries[:2]:  # warm both paths (vector copy, statement cache)
        for filt in (on, NO_FILTER):
            recall(tenant, embedder, scope_key=scope_key, query=query, filt=filt, limit=limit, settings=settings)
    for i, query in enumerate(queries):
        order = [("on", on), ("off", NO_FILTER)] if i % 2 else [("off", NO_FILTER), ("on", on)]
        for name, filt in order:
            started = time.perf_counter()
            recall(tenant, embedder, scope_key=scope_key, query=query, filt=filt, limit=limit, settings=settings)
            timings[name].append((time.perf_counter() - started) * 1000)
    p = {name: {f"p{q}": round(float(np.percentile(v, q)), 3) for q in (50, 99)} for name, v in timings.items()}
    return {
        "filtersOnMs": p["on"],
        "filtersOffMs": p["off"],
        "overheadP50Percent": round(100 * (p["on"]["p50"] / p["off"]["p50"] - 1), 1),
    }


def _retire(tenant: TenantStore, scope_key: str, fraction: float, seed: int) -> int:
    """Mark a random fraction of the scope superseded (through the store's own transaction)."""
    rows = tenant.list_facts(
        scope_key, subject_key=None, kind=None, filt=CandidateFilter(statuses=None), below=None, limit=10**9
    )
    episodes = tenant.records(list(range(1, 1 + _row_count(tenant))), with_event=False)
    candidates = [r.rowid for r in [*rows, *episodes.values()] if r.scope_key == scope_key]
    chosen = random.Random(seed).sample(candidates, int(len(candidates) * fraction))
    caller = Caller(tenant="bench", key_id="bench", role="admin")
    with tenant.transaction() as tx:
        now = clock.now_text()
        for rowid in chosen:
            tx.set_status(rowid, status="superseded", reason="benchmark", retired_at=now)
        tx.audit(caller.audit("bench.retire", reason=f"{len(chosen)} rows retired for the benchmark"))
    return len(chosen)


def _row_count(tenant: TenantStore) -> int:
    return sum(tenant.embedding_counts().values())
