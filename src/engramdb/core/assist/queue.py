"""The extraction queue: jobs stored with the tenant (so they survive a restart), taken by
workers, retried with backoff when the model fails in a way that may pass, and visible as
``queued``, ``running``, ``done`` or ``failed`` with their attempts, error and result.

A job runs as the key that queued it, in the scope it was queued for; the same request queued
twice is one job. A running job whose worker died is taken again when its lease ends.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from engramdb import clock
from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.contract.events import Scope
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.errors import EngramError, ModelFailedError
from engramdb.models.assist import AssistJobView, ExtractRequest, ExtractResult
from engramdb.storage.assist.port import JobRecord
from engramdb.storage.port import TenantStore, Transaction

log = logging.getLogger(__name__)
MAX_BACKOFF_SECONDS = 600.0


def backoff_seconds(attempts: int, base: float = 2.0) -> float:
    """The wait after try number ``attempts``: ``base``, twice that, four times, ... at most ten minutes."""
    return float(min(MAX_BACKOFF_SECONDS, base * 2.0 ** max(0, attempts - 1)))


def new_job(caller: Caller, scope: Scope, body: ExtractRequest, max_attempts: int) -> JobRecord:
    """An extraction job for ``body`` in ``scope``, run later as ``caller``."""
    now = clock.now_text()
    key = auth.scope_key(scope)
    request = body.model_dump(by_alias=True, exclude_none=True, exclude={"scope"})
    job_id = sha256_hex(canonical_json({"scope": key, "kind": "extract", "input": request}))[:32]
    return JobRecord(
        job_id=job_id,
        kind="extract",
        scope_key=key,
        scope_json=canonical_json(scope.wire()),
        input_json=canonical_json(request),
        state="queued",
        attempts=0,
        max_attempts=max_attempts,
        next_at=now,
        error=None,
        result_json=None,
        actor_key_id=caller.key_id,
        actor_role=caller.role,
        created_at=now,
        updated_at=now,
    )


def enqueue(tx: Transaction, job: JobRecord, caller: Caller) -> bool:
    """Store the job (audited) unless the same one is already queued; True when it was new."""
    added = tx.enqueue_job(job)
    if added:
        tx.audit(
            caller.audit(
                "model.job.queue",
                target_kind="model_job",
                target_id=job.job_id,
                scope_key=job.scope_key,
                reason=f"{job.kind}: {job.input_json[:200]}",
            )
        )
    return added


@dataclass(frozen=True)
class Claimed:
    """A job a worker took: who it runs as, where, on what."""

    job: JobRecord
    caller: Caller
    scope: Scope
    body: ExtractRequest


def claim(tenant: TenantStore, tenant_name: str, lease_seconds: float) -> Claimed | None:
    """Take the tenant's oldest due job, if any (a cheap read first, the write lock only then)."""
    now = clock.now_text()
    if not tenant.job_due(now):
        return None
    with tenant.transaction() as tx:
        job = tx.claim_job(now, clock.later(lease_seconds))
    if job is None:
        return None
    caller = Caller(tenant=tenant_name, key_id=job.actor_key_id or "system", role=job.actor_role or "admin")
    return Claimed(
        job,
        caller,
        Scope.model_validate_json(job.scope_json),
        ExtractRequest.model_validate(json.loads(job.input_json)),
    )


def revoked(tenant: TenantStore, job: JobRecord) -> bool:
    """True when the key that queued the job was revoked since (the job must not act for it)."""
    record = tenant.get_key(job.actor_key_id) if job.actor_key_id else None
    return record is not None and record.revoked_at is not None


def finish(
    tx: Transaction,
    job: JobRecord,
    result: ExtractResult | None,
    error: EngramError | None,
    backoff: float = 2.0,
    cpu_ms: float | None = None,
) -> str:
    """Record a run's end: done, queued again after a backoff, or failed; return the new state."""
    now = clock.now_text()
    if error is None:
        assert result is not None
        tx.finish_job(
            job.job_id,
            state="done",
            at=now,
            next_at=now,
            error=None,
            cpu_ms=cpu_ms,
            result_json=result.model_dump_json(by_alias=True, exclude_none=True),
        )
        return "done"
    message = f"{error.code}: {error.message}"[:1000]
    retry = isinstance(error, ModelFailedError) and error.retryable and job.attempts < job.max_attempts
    state = "queued" if retry else "failed"
    due = clock.later(backoff_seconds(job.attempts, backoff)) if retry else now
    tx.finish_job(job.job_id, state=state, at=now, next_at=due, error=message, result_json=None, cpu_ms=cpu_ms)
    log.log(
        logging.INFO if retry else logging.WARNING,
        "model job %s %s after attempt %d: %s",
        job.job_id,
        "queued again" if retry else "failed",
        job.attempts,
        message,
    )
    return state


def job_view(job: JobRecord) -> AssistJobView:
    scope = json.loads(job.scope_json)
    return AssistJobView(
        job_id=job.job_id,
        kind=job.kind,
        state=job.state,  # type: ignore[arg-type]  # the row's text is one of the four (JobRecord.state)
        attempts=job.attempts,
        max_attempts=job.max_attempts,
        next_attempt_at=job.next_at if job.state == "queued" else None,
        error=job.error,
        scope=scope,
        input=json.loads(job.input_json),
        result=ExtractResult.model_validate_json(job.result_json) if job.result_json else None,
        created_at=job.created_at,
        updated_at=job.updated_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        cpu_ms=job.run_cpu_ms,
    )
