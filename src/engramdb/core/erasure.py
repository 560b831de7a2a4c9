"""Forgetting: one memory (an episode, or a fact with every version), or all of a participant.

Each erasure runs in one transaction and leaves a content-free audit entry; then the store is
scrubbed so the deleted text leaves its files too (storage/erasure.py says what that takes).
Deleting a memory the caller's scope does not hold is a 404, never a 403: whether a memory
exists elsewhere is not the caller's to learn.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from engramdb import clock
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.shared import Area
from engramdb.errors import InvalidInputError, NotFoundError
from engramdb.models.erasure import (
    DeleteMemoryQuery,
    ExportLine,
    ForgetRequest,
    Forgotten,
    MemoryDeleted,
    ParticipantExport,
    ParticipantQuery,
)
from engramdb.storage.port import Erasure, MemoryRecord, Source, TenantStore, Transaction

log = logging.getLogger(__name__)


class ErasureOperations(Area):
    """Deleting memories without a trace."""

    def forget_participant(self, caller: Caller, body: ForgetRequest) -> Forgotten:
        """Erase every memory, record and tombstone of one participant in the caller's tenant."""
        auth.require(caller, "participant.forget")
        tenant = self.shared.tenant(caller)
        participant = body.participant_scope_hash
        if body.dry_run:
            return _forgotten(tenant.erasure_preview(tenant.participant_scopes(participant)), dry_run=True)
        with tenant.transaction() as tx:
            scopes = tx.participant_scopes(participant)
            erased = tx.erase_scopes(scopes)
            # An entry per scope: the change feed tells each scope's readers that it was forgotten.
            forgotten = [caller.audit("scope.forget", target_kind="scope", target_id=k, scope_key=k) for k in scopes]
            tx.audit_many(
                [
                    *forgotten,
                    caller.audit(
                        "participant.forget", target_kind="participant", target_id=participant, reason=_summary(erased)
                    ),
                ]
            )
        tenant.scrub()
        log.info("forgot a participant: %s", _summary(erased))
        return _forgotten(erased, dry_run=False)

    def export_participant(self, caller: Caller, query: ParticipantQuery) -> ParticipantExport:
        """Everything of one participant in the caller's tenant, as export lines (admin only)."""
        auth.require(caller, "participant.export")
        participant = query.participant_scope_hash
        if participant is None:
            raise InvalidInputError("participantScopeHash is required", field="participantScopeHash")
        tenant = self.shared.tenant(caller)
        rows = [ExportLine(table=t, row=r) for t, r in participant_rows(tenant, participant)]
        return ParticipantExport(
            tenant=caller.tenant, participant_scope_hash=participant, exported_at=clock.now_text(), rows=rows
        )

    def delete_episode(self, caller: Caller, event_id: str, query: DeleteMemoryQuery) -> MemoryDeleted:
        return self._delete_memory(caller, "EPISODE", event_id, query)

    def delete_fact(self, caller: Caller, fact_id: str, query: DeleteMemoryQuery) -> MemoryDeleted:
        return self._delete_memory(caller, "MEMORY_FACT", fact_id, query)

    def _delete_memory(self, caller: Caller, source: Source, memory_id: str, query: DeleteMemoryQuery) -> MemoryDeleted:
        auth.require(caller, "memory.write")
        tenant = self.shared.tenant(caller)
        scope_key = auth.scope_key(self.shared.scope(caller, query.named_scope_fields()))
        rows = _rows(tenant, scope_key, source, memory_id)
        if not rows:
            noun = "episode" if source == "EPISODE" else "fact"
            raise NotFoundError(f"no {noun} {memory_id} in this scope", id=memory_id)
        ids = sorted({r.memory_id for r in rows})
        if query.dry_run:
            return MemoryDeleted(dry_run=True, memories=ids)
        with tenant.transaction() as tx:
            # Read again, in the write (the tenant's writes held off): a correction committed since the
            # read above is a version too, and must go with the others.
            rows = _rows(tx, scope_key, source, memory_id) or rows
            gone = tx.delete_memory_rows(scope_key, rows)
            tx.audit_many(  # an entry per version: each names a row that must not come back
                [
                    caller.audit(
                        "memory.delete",
                        target_kind=row.source,
                        target_id=row.memory_id,
                        scope_key=scope_key,
                        reason=f"deleted {gone} row(s) (every version of {memory_id})",
                    )
                    for row in rows
                ]
            )
        tenant.scrub()
        return MemoryDeleted(dry_run=False, memories=ids)


def participant_rows(tenant: TenantStore, participant: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The export rows (``engram export`` format) of one participant's scopes: memories, tombstones
    and the knowledge plane; never keys, the audit chain or the tenant's policy."""
    scopes = tenant.participant_scopes(participant)
    yield from tenant.export_rows(scopes) if scopes else ()


def _rows(tenant: TenantStore | Transaction, scope_key: str, source: Source, memory_id: str) -> list[MemoryRecord]:
    """An episode is itself; a fact is every linked version of it."""
    if source == "MEMORY_FACT":
        return tenant.history(scope_key, memory_id)
    row = tenant.get_memory(scope_key, source, memory_id)
    return [row] if row is not None else []


def _summary(erased: Erasure) -> str:
    """Counts only: the entry that records an erasure must hold nothing of what was erased."""
    return (
        f"erased {erased.memories} memories, {erased.records} records, {erased.relationships} relationships, "
        f"{erased.tombstones} tombstones and {erased.audit_reasons_erased} audit reasons "
        f"in {erased.scopes} scopes"
    )


def _forgotten(erased: Erasure, *, dry_run: bool) -> Forgotten:
    return Forgotten(
        dry_run=dry_run,
        scopes=erased.scopes,
        memories=erased.memories,
        records=erased.records,
        relationships=erased.relationships,
        tombstones=erased.tombstones,
        audit_reasons_erased=erased.audit_reasons_erased,
        audit_reasons_kept=erased.audit_reasons_kept,
    )
