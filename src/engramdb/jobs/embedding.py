"""The background worker: vectors for pending rows, retries for failed ones, expiry sweeps.

A write commits its row as ``pending`` (already findable lexically) and wakes this worker. The
worker embeds pending rows in batches and stores each vector beside its row. If the embedder
fails, every row of the batch is marked ``failed`` with the error and a retry time (exponential
backoff, capped), and the traceback is logged; the next pass retries it. Each pass also marks
active facts whose ``validUntil`` has passed as ``expired`` (audited, actor ``system``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from engramdb import clock, metrics, traces
from engramdb.core.anchor import Anchors
from engramdb.core.embedding import Embedder
from engramdb.storage.port import AuditDraft, Store, TenantStore

log = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 600.0
_SYSTEM = AuditDraft(action="system", actor_key_id=None, actor_role="system")


def backoff_seconds(attempts: int) -> float:
    """Return the wait before retry number ``attempts + 1`` (1 s, 2 s, 4 s, ... capped)."""
    return float(min(MAX_BACKOFF_SECONDS, 2.0**attempts))


def embed_batch(tenant: TenantStore, embedder: Embedder, batch_size: int) -> int:
    """Embed one batch of due rows of one tenant; return how many rows were handled."""
    jobs = tenant.embedding_jobs(batch_size, clock.now_text())
    if not jobs:
        return 0
    rowids = [job.rowid for job in jobs]
    with traces.span("engramdb.job.embedding", _batch(embedder, "memory", len(jobs))) as batch:
        try:
            with metrics.EMBED_SECONDS.time():
                vectors = embedder.embed([job.text for job in jobs])
        except Exception as error:  # the job boundary: record, log, retry later
            log.exception("embedding %d rows failed", len(jobs))
            traces.failed(batch, traces.error_type(error))
            message = f"{type(error).__name__}: {error}"[:1000]
            retries = [clock.later(backoff_seconds(job.attempts)) for job in jobs]
            tenant.record_embedding_failure(rowids, message, retries)
            return len(jobs)
        tenant.save_embeddings(rowids, vectors, embedder.model_id, texts=[job.text for job in jobs])
    metrics.EMBEDDED.labels("memory").inc(len(jobs))
    return len(jobs)


def _batch(embedder: Embedder, kind: str, rows: int) -> dict[str, traces.Value] | None:
    """A worker batch's span attributes (GenAI conventions: an ``embeddings`` operation)."""
    if not traces.on():
        return None
    return {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.request.model": embedder.model_id,
        "engramdb.job": "embedding",
        "engramdb.embedding.kind": kind,  # memory, or record (a record's text)
        "engramdb.embedding.rows": rows,
    }


def embed_record_batch(tenant: TenantStore, embedder: Embedder, batch_size: int) -> int:
    """Embed one batch of due record texts (the knowledge plane's semantic search)."""
    jobs = tenant.record_embedding_jobs(batch_size, clock.now_text())
    if not jobs:
        return 0
    ids = [job_id for job_id, _, _ in jobs]
    with traces.span("engramdb.job.embedding", _batch(embedder, "record", len(jobs))) as batch:
        try:
            with metrics.EMBED_SECONDS.time():
                vectors = embedder.embed([text for _, text, _ in jobs])
        except Exception as error:  # the job boundary: record, log, retry later
            log.exception("embedding %d record texts failed", len(jobs))
            traces.failed(batch, traces.error_type(error))
            tenant.record_record_embedding_failure(
                ids, f"{type(error).__name__}: {error}"[:1000], [clock.later(backoff_seconds(a)) for _, _, a in jobs]
            )
            return len(jobs)
        tenant.save_record_embeddings(ids, [text for _, text, _ in jobs], vectors, embedder.model_id)
    metrics.EMBEDDED.labels("record").inc(len(jobs))
    return len(jobs)


def drain(
    tenant: TenantStore, embedder: Embedder, batch_size: int = 64, between: Callable[[], object] = lambda: None
) -> int:
    """Embed every due row (memories, then record texts) of a tenant now; return how many.

    Rows that fail are rescheduled at least a second later, so this always ends. ``between`` is
    called before each batch (the extraction worker waits there while a recall runs).
    """
    total = 0
    for batch in (embed_batch, embed_record_batch):
        while True:
            between()
            done = batch(tenant, embedder, batch_size)
            if not done:
                break
            total += done
    return total


def reembed(
    tenant: TenantStore, embedder: Embedder, *, batch_size: int = 64, progress: Callable[[int], None] | None = None
) -> int:
    """Embed again, with ``embedder``, every memory and record text whose vector another model made;
    return how many.

    Resumable: each batch commits with the new model's id, so a run that stops is continued by
    the next one (it asks only for rows still of another model). ``progress`` hears each batch.
    """
    done, after = 0, 0
    with tenant.aging.maintenance():  # finding the stale rows reads past every fresh one
        while rows := tenant.aging.stale_vectors(embedder.model_id, after_rowid=after, limit=batch_size):
            vectors = embedder.embed([text for _, text in rows])
            tenant.save_embeddings(
                [rowid for rowid, _ in rows], vectors, embedder.model_id, texts=[text for _, text in rows]
            )
            done, after = done + len(rows), rows[-1][0]
            if progress is not None:
                progress(len(rows))
        after = 0
        while texts := tenant.aging.stale_record_vectors(embedder.model_id, after_rowid=after, limit=batch_size):
            vectors = embedder.embed([text for _, text in texts])
            tenant.save_record_embeddings(
                [i for i, _ in texts], [text for _, text in texts], vectors, embedder.model_id
            )
            done, after = done + len(texts), texts[-1][0]
            if progress is not None:
                progress(len(texts))
    return done


class EmbeddingWorker:
    """A background thread that keeps every tenant's vectors and expiries up to date."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        wake: threading.Event,
        *,
        batch_size: int = 64,
        poll_seconds: float = 0.5,
        anchors: Anchors | None = None,
    ) -> None:
        self._anchors = anchors
        self._store = store
        self._embedder = embedder
        self._wake = wake
        self._batch_size = batch_size
        self._poll_seconds = poll_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="engram-embedder", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                busy = self._pass()
                metrics.JOB_RUNS.labels("embedding", "ok").inc()
            except Exception:  # the supervisor boundary: log with traceback, keep running
                log.exception("embedding pass failed")
                metrics.JOB_RUNS.labels("embedding", "failed").inc()
                busy = False
            if not busy:
                self._wake.wait(self._poll_seconds)

    def _pass(self) -> bool:
        handled = 0
        for name in self._store.tenant_names():
            tenant = self._store.tenant(name)
            tenant.expire_due(clock.now_text(), _SYSTEM)
            handled += embed_batch(tenant, self._embedder, self._batch_size)
            handled += embed_record_batch(tenant, self._embedder, self._batch_size)
            if self._anchors is not None:  # the chain's head, anchored outside the database
                self._anchors.advance(name, tenant)
        return handled > 0
