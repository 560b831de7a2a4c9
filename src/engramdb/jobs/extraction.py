"""The extraction workers: threads that take queued model jobs of every tenant and run them.

A worker takes a tenant's oldest due job (``core/assist/queue.py``), runs extraction and judgement
as the key that queued it, and records the result; a failure that may pass (the model timed out
or was unreachable) puts the job back with a backoff, any other marks it failed with the error.
The model's calls are recorded in the ledger either way. Nothing here runs on a request's path.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from engramdb import traces
from engramdb.config import Settings
from engramdb.core.assist import pipeline, queue
from engramdb.core.assist.extraction import turns_for
from engramdb.core.assist.work import Work
from engramdb.core.service import MemoryService
from engramdb.errors import EngramError, InternalError
from engramdb.jobs.embedding import drain as embed_drain
from engramdb.models.assist import ExtractResult
from engramdb.storage.port import TenantStore

log = logging.getLogger(__name__)


def run_claimed(service: MemoryService, tenant: TenantStore, claimed: queue.Claimed) -> str:
    """Run one claimed job to its next state (done, queued again, failed); return that state.

    Traced as ``engramdb.job.extraction`` (a trace of its own: the model's ``chat`` spans inside).
    """
    job = claimed.job
    attributes: dict[str, traces.Value] | None = None
    if traces.on():
        attributes = {
            "engramdb.job": "extraction",
            "engramdb.job.id": job.job_id,
            "engramdb.job.kind": job.kind,
            "engramdb.job.attempt": job.attempts,
            "engramdb.tenant": claimed.caller.tenant,
        }
    with traces.span("engramdb.job.extraction", attributes) as running:
        state, error = _run_claimed(service, tenant, claimed)
        running.set_attribute("engramdb.job.state", state)
        if error is not None:
            traces.failed(running, error.code)
    return state


def _run_claimed(service: MemoryService, tenant: TenantStore, claimed: queue.Claimed) -> tuple[str, EngramError | None]:
    job = claimed.job
    work: Work | None = None
    result: ExtractResult | None = None
    error: EngramError | None = None
    started, cpu = time.perf_counter(), time.thread_time()
    try:
        if job.attempts > job.max_attempts:
            raise InternalError(f"taken {job.attempts - 1} times without finishing (did its worker stop?)")
        if queue.revoked(tenant, job):
            raise InternalError(f"the key that queued it ({job.actor_key_id}) was revoked")
        work = service.assist.work(claimed.caller, claimed.scope.wire(), job_id=job.job_id)
        work.pause = recall_first(service)
        result = pipeline.extract(work, turns_for(work, claimed.body))
    except EngramError as failure:
        error = failure
    except Exception as failure:  # the job boundary: log with its traceback, fail the job, keep working
        log.exception("model job %s failed", job.job_id)
        error = InternalError(f"{type(failure).__name__}: {failure}"[:500])
    recall_first(service)()
    spent = (time.thread_time() - cpu) * 1000  # this thread's CPU: waiting for the model costs none
    backoff = service.shared.settings.llm.job_backoff_seconds
    try:
        with tenant.transaction() as tx:
            if work is not None and not work.recorded:  # a finished run recorded its calls with its writes
                tx.record_calls(work.ledger())
            state = queue.finish(tx, job, result, error, backoff, cpu_ms=spent)
    except Exception as failure:  # the job boundary again: a job is never left "running" by its own end
        log.exception("model job %s could not be finished as %s", job.job_id, "failed" if error else "done")
        with tenant.transaction() as tx:
            unfinished = InternalError(f"its end could not be stored: {type(failure).__name__}"[:500])
            state = queue.finish(tx, job, None, unfinished, backoff, cpu_ms=spent)
    service.shared.written.set()
    log.debug("model job %s: %s in %.0f ms", job.job_id, state, (time.perf_counter() - started) * 1000)
    return state, error


def recall_first(service: MemoryService) -> Callable[[], float]:
    """Between a queued job's steps: wait while the server answers recalls, up to llm.recallFirstMs."""
    at_most = service.shared.settings.llm.recall_first_ms / 1000
    return lambda: service.shared.foreground.wait_for_recalls(at_most)


def drain(service: MemoryService, tenant_name: str, lease_seconds: float = 300.0) -> int:
    """Run every due job of one tenant now, in this thread; return how many runs there were."""
    tenant = service.shared.store.tenant(tenant_name)
    runs = 0
    while (claimed := queue.claim(tenant, tenant_name, lease_seconds)) is not None:
        run_claimed(service, tenant, claimed)
        runs += 1
    return runs


class ExtractionWorker:
    """``threads`` background threads working through every tenant's queue.

    ``embed``: after a job, embed what it wrote here (in a worker process, so that the server's
    embedding worker, beside recall, has nothing to do for it); one thread at a time does it.
    """

    def __init__(self, service: MemoryService, *, threads: int, poll_seconds: float = 0.5, embed: bool = False) -> None:
        self._service = service
        self._embed = embed
        self._embedding = threading.Lock()
        self._threads = [
            threading.Thread(target=self._run, name=f"engram-extract-{i}", daemon=True) for i in range(threads)
        ]
        self._poll = poll_seconds
        self._stop = threading.Event()

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._service.shared.queued.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                busy = self._pass()
            except Exception:  # the supervisor boundary: log with traceback, keep running
                log.exception("extraction pass failed")
                busy = False
            if not busy:
                self._service.shared.queued.wait(self._poll)
                self._service.shared.queued.clear()

    def _pass(self) -> bool:
        lease = self._service.shared.settings.llm.job_lease_seconds
        for name in self._service.shared.store.tenant_names():
            tenant = self._service.shared.store.tenant(name)
            claimed = queue.claim(tenant, name, lease)
            if claimed is not None:
                run_claimed(self._service, tenant, claimed)
                if self._embed and self._embedding.acquire(blocking=False):  # another thread is at it: it takes ours
                    try:
                        embed_drain(
                            tenant,
                            self._service.shared.embedder,
                            self._service.shared.settings.embed_batch_size,
                            between=recall_first(self._service),
                        )
                    finally:
                        self._embedding.release()
                return True
        return False


def worker_env(settings: Settings) -> dict[str, str]:
    """The environment that gives ``engram assist work`` the server's settings (store, embedder, model)."""
    env = {
        **os.environ,
        "ENGRAM_HOME": str(settings.home),
        "ENGRAM_EMBEDDER": settings.embedder,
        "ENGRAM_PG_SCHEMA": settings.pg_schema,
        "ENGRAM_SQLITE_SYNCHRONOUS": settings.sqlite_synchronous,
    }
    for name, value in (("DATABASE_URL", settings.database_url), ("EMBEDDER_API_KEY", settings.embedder_api_key)):
        if value:
            env[f"ENGRAM_{name}"] = value
    for section in ("llm", "retrieval"):
        for name, value in getattr(settings, section):
            if value is not None:
                secret = getattr(value, "get_secret_value", None)
                env[f"ENGRAM_{section.upper()}__{name.upper()}"] = secret() if secret else str(value)
    return env


class WorkerProcess:
    """``engram assist work`` as a child of the server, started again if it ever stops."""

    def __init__(self, settings: Settings) -> None:
        self._env = worker_env(settings)
        self._stop = threading.Event()
        self._proc: subprocess.Popen[bytes] | None = None
        self._watch = threading.Thread(target=self._supervise, name="engram-extract-process", daemon=True)

    def start(self) -> None:
        self._watch.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # it finishes the jobs in hand (their leases cover a hard stop)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._watch.join(timeout)

    def _supervise(self) -> None:
        backoff = 1.0
        while not self._stop.is_set():
            started = time.monotonic()
            self._proc = subprocess.Popen([sys.executable, "-m", "engramdb.cli", "assist", "work"], env=self._env)
            code = self._proc.wait()
            if self._stop.is_set():
                return
            backoff = 1.0 if time.monotonic() - started > 60 else min(backoff * 2, 60.0)
            log.error("the extraction worker process exited with %s; starting it again in %.0f s", code, backoff)
            self._stop.wait(backoff)
