"""Operations of memory that ages: a person's marks, restoring an archived memory, the jobs.

The decisions are in core/aging/decay.py, the sweep in core/aging/sweep.py; the server's supervisor
(jobs/supervisor.py) runs it on a schedule, and ``run_aging`` runs it now for one tenant.
"""

from __future__ import annotations

from engramdb import clock
from engramdb.core import auth
from engramdb.core.aging.sweep import sweep
from engramdb.core.auth import Caller
from engramdb.core.decisions import refuse_if_tombstoned
from engramdb.core.facts import state_digest
from engramdb.core.policy import load_policy
from engramdb.core.shared import Area
from engramdb.core.views import memory_view
from engramdb.errors import ConflictError, InvalidInputError, NotFoundError
from engramdb.models.aging import AgingRun, ArchiveRequest, JobList, MarkRequest, MemoryMarks, RestoreRequest
from engramdb.models.memories import MemoryView
from engramdb.storage.port import MemoryRecord, Source, TenantStore, Transaction


class AgingOperations(Area):
    """Marks, restore and the jobs' state."""

    def mark_fact(self, caller: Caller, fact_id: str, body: MarkRequest) -> MemoryMarks:
        return self._mark(caller, "MEMORY_FACT", fact_id, body)

    def mark_episode(self, caller: Caller, event_id: str, body: MarkRequest) -> MemoryMarks:
        if body.pinned is not None:
            raise InvalidInputError("only facts are pinned; give an episode an importance", field="pinned")
        return self._mark(caller, "EPISODE", event_id, body)

    def archive_fact(self, caller: Caller, fact_id: str, body: ArchiveRequest) -> MemoryView:
        return self._archive(caller, "MEMORY_FACT", fact_id, body)

    def archive_episode(self, caller: Caller, event_id: str, body: ArchiveRequest) -> MemoryView:
        return self._archive(caller, "EPISODE", event_id, body)

    def restore_fact(self, caller: Caller, fact_id: str, body: RestoreRequest) -> MemoryView:
        return self._restore(caller, "MEMORY_FACT", fact_id, body)

    def restore_episode(self, caller: Caller, event_id: str, body: RestoreRequest) -> MemoryView:
        return self._restore(caller, "EPISODE", event_id, body)

    def list_jobs(self, caller: Caller) -> JobList:
        auth.require(caller, "jobs.read")
        return JobList(jobs=self.shared.supervisor.views() if self.shared.supervisor is not None else [])

    def run_aging(self, caller: Caller) -> AgingRun:
        """Run the aging sweep of the caller's tenant now (the supervisor runs it on a schedule)."""
        auth.require(caller, "jobs.run")
        counts = sweep(self.shared.tenant(caller), self.shared.now())
        return AgingRun(
            weighed=counts.weighed,
            archived=counts.archived,
            erased_episodes=counts.erased_episodes,
            erased_facts=counts.erased_facts,
        )

    def _mark(self, caller: Caller, source: Source, memory_id: str, body: MarkRequest) -> MemoryMarks:
        auth.require(caller, "memory.mark")
        if body.pinned is None and body.importance is None:
            raise InvalidInputError("say pinned or importance (or both)", field="pinned")
        tenant, scope_key = self._memory_scope(caller, body)
        with tenant.transaction() as tx:  # read where it is written: a delete may have come between
            row = _found(tx, scope_key, source, memory_id)
            tx.set_marks(row.rowid, pinned=body.pinned, importance=body.importance)
            pinned, importance = tx.marks(row.rowid)
            marked = tx.get_memory(scope_key, source, memory_id)
            tx.audit(
                caller.audit(
                    "memory.mark",
                    target_kind=source,
                    target_id=memory_id,
                    scope_key=scope_key,
                    before_digest=state_digest(row),
                    after_digest=None if marked is None else state_digest(marked),
                    reason=_marked(body.reason, pinned, importance),
                )
            )
        return MemoryMarks(memory=memory_view(row), pinned=pinned, importance=importance)

    def _archive(self, caller: Caller, source: Source, memory_id: str, body: ArchiveRequest) -> MemoryView:
        auth.require(caller, "memory.mark")
        tenant, scope_key = self._memory_scope(caller, body)
        with tenant.transaction() as tx:  # read where it is written: a retraction, a correction or a delete
            row = _found(tx, scope_key, source, memory_id)  # may have come between, and must stay as it made it
            if row.status != "active":
                raise ConflictError(f"{memory_id} is {row.status}; only an active memory is archived", id=memory_id)
            archived = tx.set_status(
                row.rowid, status="archived", reason=body.reason, retired_at=clock.to_text(self.shared.now())
            )
            tx.audit(
                caller.audit(
                    "memory.archive",
                    target_kind=source,
                    target_id=memory_id,
                    scope_key=scope_key,
                    before_digest=state_digest(row),
                    after_digest=state_digest(archived),
                    reason=body.reason,
                )
            )
        return memory_view(archived)

    def _restore(self, caller: Caller, source: Source, memory_id: str, body: RestoreRequest) -> MemoryView:
        auth.require(caller, "memory.write")
        tenant, scope_key = self._memory_scope(caller, body)
        with tenant.transaction() as tx:  # read where it is written (see _archive)
            row = _found(tx, scope_key, source, memory_id)
            if row.status != "archived":
                raise ConflictError(f"{memory_id} is {row.status}; only an archived memory is restored", id=memory_id)
            if source == "MEMORY_FACT" and row.subject_key and row.kind:
                refuse_if_tombstoned(tx, row)
            if (
                source == "MEMORY_FACT"
                and row.subject_key
                and row.kind
                and not load_policy(tenant).is_multi_valued(row.kind)
            ):
                current = tx.active_facts(scope_key, row.subject_key, row.kind)
                if current:  # one current value per single-valued slot
                    raise ConflictError(
                        f"fact {current[0].memory_id} holds this slot now; correct it instead", id=current[0].memory_id
                    )
            restored = tx.set_status(row.rowid, status="active", reason=None, retired_at=None)
            tx.touch(row.rowid, clock.to_text(self.shared.now()))  # restored means wanted: it starts strong again
            tx.audit(
                caller.audit(
                    "memory.restore",
                    target_kind=source,
                    target_id=memory_id,
                    scope_key=scope_key,
                    before_digest=state_digest(row),
                    after_digest=state_digest(restored),
                    reason=body.reason or "restored from the archive",
                )
            )
        return memory_view(restored)

    def _memory_scope(
        self, caller: Caller, body: MarkRequest | RestoreRequest | ArchiveRequest
    ) -> tuple[TenantStore, str]:
        scope = self.shared.scope(caller, body.scope.named_scope_fields() if body.scope else {})
        return self.shared.tenant(caller), auth.scope_key(scope)


def _found(tenant: TenantStore | Transaction, scope_key: str, source: Source, memory_id: str) -> MemoryRecord:
    row = tenant.get_memory(scope_key, source, memory_id)
    if row is None:
        noun = "episode" if source == "EPISODE" else "fact"
        raise NotFoundError(f"no {noun} {memory_id} in this scope", id=memory_id)
    return row


def _marked(reason: str | None, pinned: bool | None, importance: float | None) -> str:
    """The audit entry's reason: the person's own, then the marks as they now stand."""
    marks = f"pinned={pinned} importance={importance}"
    return f"{reason} ({marks})" if reason else marks
