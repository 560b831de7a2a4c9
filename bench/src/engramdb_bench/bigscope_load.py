"""Loading the big-scope benchmark: the write path's rows through ``bulk_load``, and the check on
a sample that the write path and the bulk load leave the same rows."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from engramdb.config import Settings
from engramdb.contract.canonical import sha256_hex
from engramdb.contract.writes import EpisodeWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.coverage import check_rows
from engramdb.core.rows import episode_row
from engramdb.core.service import MemoryService
from engramdb.storage.port import AuditDraft, NewMemory, Store, TenantStore
from engramdb_bench.bigscope_corpus import Corpus, episode_body
from engramdb_bench.bigscope_model import TENANT, Layout, Progress, Target, scope_of
from engramdb_bench.lifecycle_cost import PrecomputedEmbedder

_BATCH = 5_000


def corpus_rows(corpus: Corpus, layout: Layout, now: str) -> Iterator[tuple[NewMemory, np.ndarray, AuditDraft]]:
    """The layout's rows as the write path makes them, with their vectors and audit drafts."""
    caller = Caller(TENANT, "bench", "admin")
    indexes: dict[str, int] = {}
    for ordinal, turn, text, session, vector in corpus.rows(layout.total):
        body = EpisodeWrite.model_validate(
            episode_body(scope_of(ordinal % layout.scopes), turn, text, session, indexes.setdefault(session, 0))
        )
        indexes[session] += 1
        scope = auth.resolve_scope(caller, body.named_scope_fields())
        row = episode_row(body.to_event(scope), scope, now)
        audit = caller.audit(
            "episode.write",
            target_kind=row.source,
            target_id=row.memory_id,
            scope_key=row.scope.scope_key,
            after_digest=sha256_hex(row.event_json),
        )
        yield row, vector, audit


def bulk_load(store: Store, corpus: Corpus, layout: Layout, progress: Progress) -> float:
    """Load the layout through ``bulk_load``; return the seconds it took."""
    tenant = store.tenant(TENANT, create=True)
    started, batch, done = time.perf_counter(), [], 0
    for item in corpus_rows(corpus, layout, _now()):
        batch.append(item)
        if len(batch) == _BATCH:
            _load(tenant, corpus, batch)
            batch, done = [], done + len(batch)  # counted here: counting the table's rows read them all
            if done % 100_000 == 0:
                progress(f"  loaded {done:,}/{layout.total:,} ({time.perf_counter() - started:.0f} s)")
    _load(tenant, corpus, batch)
    return time.perf_counter() - started


def _load(tenant: TenantStore, corpus: Corpus, batch: list[tuple[NewMemory, np.ndarray, AuditDraft]]) -> None:
    if batch:
        tenant.bulk_load(
            [r for r, _, _ in batch], np.stack([v for _, v, _ in batch]), corpus.model, [a for _, _, a in batch]
        )


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_VOLATILE = {"recorded_at", "active_from"}  # the write path stamps its own clock


def same_rows(corpus: Corpus, target: Target, progress: Progress, n: int = 300) -> dict[str, Any]:
    """Write ``n`` corpus rows through the write path (``write_episodes``, then the embedding job's
    ``save_embeddings``) and through ``bulk_load`` into two tenants; compare what each stored."""
    store = target.open()
    try:
        layout = Layout(n, 3)
        items = list(corpus_rows(corpus, layout, _now()))
        store.tenant("bulk", create=True).bulk_load(
            [r for r, _, _ in items], np.stack([v for _, v, _ in items]), corpus.model, [a for _, _, a in items]
        )
        service = MemoryService(store, PrecomputedEmbedder({"x": corpus.vectors[0]}, corpus.model), Settings())
        production = store.tenant("written", create=True)
        bodies = [
            EpisodeWrite.model_validate(episode_body(scope_of(o % layout.scopes), t, text, s, 0))
            for o, t, text, s, _ in corpus.rows(n)
        ]
        _reindex(bodies)
        service.writes.write_episodes(Caller("written", "bench", "admin"), bodies)
        jobs = production.embedding_jobs(n, "9999-01-01T00:00:00.000000Z")
        production.save_embeddings([j.rowid for j in jobs], np.stack([v for _, v, _ in items]), corpus.model)
        differences = _differences(store.tenant("bulk"), production)
        differences += _unaudited(store.tenant("bulk"), "bulk") + _unaudited(production, "written")
    finally:
        store.close()
    progress(f"{target.backend}: {n} rows written both ways, {len(differences)} differences")
    return {
        "rows": n,
        "differences": differences[:10],
        "identical": not differences,
        "ignored": sorted(_VOLATILE | {"rowid", "audit at/hash/prev_hash/after_digest (held to its row instead)"}),
    }


def _reindex(bodies: list[EpisodeWrite]) -> None:
    """Number the turns of each session from 0, as ``corpus_rows`` does."""
    seen: dict[str, int] = {}
    for i, body in enumerate(bodies):
        session = str(body.external_session_id)
        bodies[i] = body.model_copy(update={"turn_index": seen.get(session, 0)})
        seen[session] = seen.get(session, 0) + 1


def _unaudited(tenant: TenantStore, name: str) -> list[str]:
    """The row ``engram audit verify`` finds out of step with its last audit entry, if any."""
    fault = check_rows(tenant, name).fault
    return [] if fault is None else [f"{name}: {fault.kind} {fault.row_id} {fault.problem}"]


def _differences(bulk: TenantStore, written: TenantStore) -> list[str]:
    def table(tenant: TenantStore, name: str) -> list[dict[str, Any]]:
        rows = [r for t, r in tenant.export_rows() if t == name]
        # An entry's after_digest holds its row's recorded_at: each is held to its own row instead.
        skip = _VOLATILE | {"at", "hash", "prev_hash", "after_digest"}
        return [{k: v for k, v in r.items() if k not in skip} for r in rows]

    found = []
    for name in ("memories", "audit_log"):
        a, b = table(bulk, name), table(written, name)
        if len(a) != len(b):
            found.append(f"{name}: {len(a)} rows vs {len(b)}")
        for x, y in zip(a, b, strict=False):
            found += [f"{name} {k}: {x.get(k)!r:.60} vs {y.get(k)!r:.60}" for k in x if x.get(k) != y.get(k)]
    return found
