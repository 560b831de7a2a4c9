"""A person's decisions on the fact lifecycle: approve or reject a fact waiting for review, lift a tombstone.

Each runs inside one store transaction, under the same rules as a new fact (core/facts.py):
tombstones hold, the age guard holds, one value is current per slot, every change is audited.
"""

from __future__ import annotations

from dataclasses import replace

from engramdb.core.auth import Caller
from engramdb.core.facts import (
    FactOutcome,
    Outcome,
    first_id,
    fit_into_slot,
    newer_versions,
    retire,
    state_digest,
    victims,
)
from engramdb.core.policy import TenantPolicy
from engramdb.core.tombstones import find_tombstone, value_hash
from engramdb.errors import ConflictError, NotFoundError
from engramdb.storage.port import MemoryRecord, Tombstone, Transaction


def lift(tx: Transaction, tombstone_id: str, caller: Caller, *, reason: str, at: str) -> Tombstone:
    """Lift a tombstone so its value may become current again (audited)."""
    tomb = tx.get_tombstone(tombstone_id)
    if tomb is None:
        raise NotFoundError(f"no tombstone {tombstone_id}", id=tombstone_id)
    if not tx.lift_tombstone(tombstone_id, at=at, by=caller.key_id, reason=reason):
        raise ConflictError(f"tombstone {tombstone_id} was already lifted", id=tombstone_id)
    tx.audit(
        caller.audit(
            "tombstone.lift", target_kind="tombstone", target_id=tombstone_id, scope_key=tomb.scope_key, reason=reason
        )
    )
    return replace(tomb, lifted_at=at, lifted_by=caller.key_id, lift_reason=reason)


def approve(
    tx: Transaction,
    pending: MemoryRecord,
    caller: Caller,
    policy: TenantPolicy,
    *,
    at: str,
    reason: str | None = None,
    supersedes: str | None = None,
) -> FactOutcome:
    """Make a pending fact current, under the same rules as a new fact (tombstones, age guard).

    The approved fact names the current fact it replaces as ``supersedesFactId``, else
    ``supersedes`` (the draft a reviewer edited). A fact older than a current version of its slot
    is kept as history instead.
    """
    require_pending(pending)
    refuse_if_tombstoned(tx, pending)
    replaced = [v for v in victims(tx, pending, policy, None) if v.memory_id != pending.memory_id]
    before = state_digest(pending)
    newer = newer_versions(tx, replace(pending, recorded_at=at), policy, replaced)
    if newer:
        record = tx.set_status(
            pending.rowid,
            status="superseded",
            retired_at=at,
            superseded_by=newer[0].memory_id,
            supersedes=supersedes,
            invalid_at=fit_into_slot(tx, pending, caller, policy) or newer[0].valid_from,
            reason=f"approved, but older than fact {newer[0].memory_id} of the same slot",
        )
        outcome: Outcome = "history"
    else:
        record = tx.set_status(
            pending.rowid, status="active", reason=reason, active_from=at, supersedes=first_id(replaced) or supersedes
        )
        outcome = "superseded" if replaced else "created"
    tx.audit(
        caller.audit(
            "review.approve",
            target_kind="MEMORY_FACT",
            target_id=pending.memory_id,
            scope_key=pending.scope_key,
            before_digest=before,
            after_digest=state_digest(record),
            reason=reason,
        )
    )
    if newer:
        return FactOutcome(outcome, record)
    retired = _retire_replaced(tx, pending, replaced, caller, at=at)
    fit_into_slot(tx, record, caller, policy)
    return FactOutcome(outcome, record, superseded=tuple(retired))


def refuse_if_tombstoned(tx: Transaction, pending: MemoryRecord) -> None:
    """ConflictError when ``pending``'s value is tombstoned in its slot: approving or restoring it
    would bring back a value corrected away."""
    assert pending.subject_key is not None and pending.kind is not None
    tomb = find_tombstone(tx, pending.scope_key, pending.subject_key, pending.kind, pending.text)
    if tomb is not None:
        raise ConflictError(
            f"this value is tombstoned ({tomb.reason or 'no reason given'}); lift the tombstone first",
            field="text",
            tombstoneId=tomb.tombstone_id,
        )


def _retire_replaced(
    tx: Transaction, approved: MemoryRecord, replaced: list[MemoryRecord], caller: Caller, *, at: str
) -> list[MemoryRecord]:
    """Supersede the versions an approved fact replaces (a different value is tombstoned too)."""
    return [
        retire(
            tx,
            old,
            caller,
            status="superseded",
            at=at,
            reason=f"superseded by {approved.memory_id} (approved in review)",
            successor=approved.memory_id,
            invalid_at=approved.valid_from,
            tombstone=value_hash(old.text) != value_hash(approved.text),
        )
        for old in replaced
    ]


def reject(tx: Transaction, pending: MemoryRecord, caller: Caller, *, reason: str, at: str) -> MemoryRecord:
    """Reject a pending fact: it never becomes current and its value is tombstoned."""
    require_pending(pending)
    assert pending.subject_key is not None and pending.kind is not None
    value = value_hash(pending.text)
    current = [
        f for f in tx.active_facts(pending.scope_key, pending.subject_key, pending.kind) if value_hash(f.text) == value
    ]
    # A copy of what the slot holds now, rejected: the submission goes, the current value is no less true.
    return retire(tx, pending, caller, status="rejected", at=at, reason=reason, tombstone=not current)


def require_pending(fact: MemoryRecord) -> None:
    """ConflictError unless ``fact`` waits for review: a decision on it would undo a later one."""
    if fact.status != "pending_review":
        raise ConflictError(
            f"fact {fact.memory_id} is {fact.status}, not pending review", id=fact.memory_id, status=fact.status
        )
