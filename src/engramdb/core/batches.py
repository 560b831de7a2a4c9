"""What a batch of episodes can ask beyond being written: a dry run (what would be written, what is
stored already) and extraction queued for the episodes it created (``engram import`` uses both)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engramdb.contract.events import Scope
from engramdb.core import auth
from engramdb.core.assist import queue
from engramdb.core.auth import Caller
from engramdb.models.assist import ExtractRequest
from engramdb.models.memories import WriteResponse
from engramdb.storage.port import NewMemory, TenantStore, Transaction

EPISODES_PER_JOB = 50  # what one extraction request may name


def preview(tenant: TenantStore, rows: Sequence[NewMemory]) -> list[dict[str, Any]]:
    """Each row's answer had it been written: 201 new, 200 stored already (or earlier in the batch)."""
    answers, taken = [], set()
    with tenant.reading():
        for row in rows:
            where = (row.scope.scope_key, row.memory_id)
            exists = where in taken or tenant.get_memory(row.scope.scope_key, "EPISODE", row.memory_id) is not None
            taken.add(where)
            answers.append(
                {
                    "status": 200 if exists else 201,
                    "id": row.memory_id,
                    "created": not exists,
                    "outcome": "exists" if exists else "created",
                    "dryRun": True,
                }
            )
    return answers


def queue_extractions(
    tx: Transaction,
    caller: Caller,
    created: Sequence[tuple[Scope, WriteResponse]],
    max_attempts: int,
) -> dict[str, str]:
    """Queue extraction of the episodes a batch created, a job per scope and 50 episodes, in the
    batch's transaction; return each episode's job id."""
    by_scope: dict[str, tuple[Scope, list[str]]] = {}
    for scope, written in created:
        by_scope.setdefault(auth.scope_key(scope), (scope, []))[1].append(written.id)
    jobs: dict[str, str] = {}
    for scope, ids in by_scope.values():
        for start in range(0, len(ids), EPISODES_PER_JOB):
            chunk = ids[start : start + EPISODES_PER_JOB]
            job = queue.new_job(caller, scope, ExtractRequest.model_validate({"episodeIds": chunk}), max_attempts)
            queue.enqueue(tx, job, caller)
            jobs.update(dict.fromkeys(chunk, job.job_id))
    return jobs
