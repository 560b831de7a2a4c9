"""Stored rows as the models every surface shows (the storage layer knows none of these)."""

from __future__ import annotations

import json
from typing import Literal

from engramdb.models.admin import AuditView, KeyView
from engramdb.models.base import ScopeView
from engramdb.models.lifecycle import TombstoneView
from engramdb.models.memories import EmbeddingStatus, MemoryView
from engramdb.models.scopes import ScopeSummary
from engramdb.storage.port import AuditEntry, KeyRecord, MemoryRecord, ScopeColumns, ScopeStats, Tombstone


def embedding_state(record: MemoryRecord, model: str | None) -> Literal["pending", "ready", "failed", "stale"]:
    """The row's embedding state, ``stale`` when its vector is another model's than ``model``
    (the vector arm leaves it out; it is found by words until ``engram reembed``)."""
    if model is not None and record.embed_state == "ready" and record.embed_model != model:
        return "stale"
    return record.embed_state


def memory_view(record: MemoryRecord, model: str | None = None) -> MemoryView:
    """Return a stored memory with its lifecycle and embedding state (against the embedder ``model``)."""
    return MemoryView(
        id=record.memory_id,
        source=record.source,
        status=record.status,
        origin=record.origin,
        recorded_at=record.recorded_at,
        active_from=record.active_from,
        retired_at=record.retired_at,
        valid_from=record.valid_from,
        valid_until=record.valid_until,
        invalid_at=record.invalid_at,
        supersedes_fact_id=record.supersedes_id,
        superseded_by_fact_id=record.superseded_by_id,
        status_reason=record.status_reason,
        pinned=True if record.pinned else None,
        importance=None if record.importance is None else float(record.importance),
        embedding=EmbeddingStatus(
            state=embedding_state(record, model),
            error=record.embed_error,
            attempts=record.embed_attempts,
            model=record.embed_model,
        ),
        event=json.loads(record.event_json),
    )


def tombstone_view(t: Tombstone) -> TombstoneView:
    return TombstoneView(
        tombstone_id=t.tombstone_id,
        subject_key=t.subject_key,
        kind=t.kind,
        value_hash=t.value_hash,
        fact_id=t.fact_id,
        reason=t.reason,
        created_at=t.created_at,
        lifted_at=t.lifted_at,
        lift_reason=t.lift_reason,
    )


def scope_view(scope: ScopeColumns) -> ScopeView:
    return ScopeView(
        agent_id=scope.agent_id,
        profile_id=scope.profile_id,
        privacy_scope=scope.privacy_scope,
        participant_scope_hash=scope.participant_scope_hash,
        sandbox_eligible=scope.sandbox_eligible,
    )


def key_view(record: KeyRecord) -> KeyView:
    return KeyView(
        key_id=record.key_id,
        role=record.role,
        grant=json.loads(record.grant_json),
        label=record.label,
        created_at=record.created_at,
        revoked_at=record.revoked_at,
    )


def audit_view(entry: AuditEntry) -> AuditView:
    return AuditView(**vars(entry))


def scope_summary(stats: ScopeStats) -> ScopeSummary:
    return ScopeSummary(
        **scope_view(stats.scope).model_dump(),
        scope_key=stats.scope.scope_key,
        episodes=stats.episodes,
        facts=stats.facts,
        pending=stats.pending,
        last_recorded_at=stats.last_recorded_at,
    )
