"""The fact lifecycle, owned by the server: supersede, correct, retract, age guard, tombstones.

A person's decisions on a fact (approving or rejecting one that waits for review, lifting a
tombstone) are in core/decisions.py.

Every function here runs inside one store transaction, so a correction writes the new fact, the
retired one, the tombstone and every audit entry together or not at all. Concurrent correctors
serialise on the transaction: the second one finds its target already retired (409).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from engramdb.audit_chain.states import memory_digest
from engramdb.core.auth import Caller
from engramdb.core.policy import TenantPolicy
from engramdb.core.tombstones import find_tombstone, tombstone_for, value_hash
from engramdb.errors import ConflictError, NotFoundError
from engramdb.storage.port import MemoryRecord, NewMemory, Tombstone, Transaction

_RETIRE_ACTIONS = {
    "superseded": "fact.supersede",
    "retracted": "fact.retract",
    "archived": "fact.archive",
    "rejected": "review.reject",
}
Outcome = Literal["created", "exists", "superseded", "history", "parked", "refused"]


@dataclass(frozen=True)
class FactOutcome:
    """What a fact write did. ``refused`` carries the tombstone that refused it."""

    outcome: Outcome
    record: MemoryRecord | None
    superseded: tuple[MemoryRecord, ...] = ()
    tombstone: Tombstone | None = None

    @property
    def created(self) -> bool:
        return self.outcome not in ("exists", "refused")


def state_digest(record: MemoryRecord) -> str:
    """Digest of a memory's state for the audit log's before/after: everything that decides what a
    read returns (its lifecycle, trust, scope, content and marks; engramdb/audit_chain/states.py)."""
    return memory_digest(record)


def _is_newer(record: MemoryRecord, than: NewMemory | MemoryRecord) -> bool:
    """Age guard order: validFrom, then recordedAt (the incoming row is recorded last)."""
    return (record.valid_from or "", record.recorded_at) > (than.valid_from or "", than.recorded_at)


def assert_fact(
    tx: Transaction,
    row: NewMemory,
    caller: Caller,
    policy: TenantPolicy,
    *,
    target_id: str | None = None,
    reason: str | None = None,
) -> FactOutcome:
    """Store a fact and apply supersession, tombstones and the age guard.

    ``target_id`` names the fact this one corrects (``supersedesFactId`` or the correct
    endpoint); without it, a single-valued kind supersedes the slot's current fact.
    """
    assert row.subject_key is not None and row.kind is not None
    existing = tx.get_memory(row.scope.scope_key, "MEMORY_FACT", row.memory_id)
    if existing is not None:
        return FactOutcome("exists", existing)
    if row.status != "active":  # arrived inactive: history, outside the lifecycle
        return FactOutcome("created", _insert(tx, row, caller, "fact.write"))
    tomb = find_tombstone(tx, row.scope.scope_key, row.subject_key, row.kind, row.text)
    if tomb is not None:
        return _tombstoned(tx, row, caller, policy, tomb)
    rule = policy.rule(row.trust_class, row.origin)
    if rule.status == "pending_review":  # not current until a reviewer approves it
        why = f"awaiting review (trust={row.trust_class}, origin={row.origin})"
        return FactOutcome("parked", _park(tx, row, caller, why))
    replaced = victims(tx, row, policy, target_id)
    newer = newer_versions(tx, row, policy, replaced)
    if newer:
        return _store_as_history(tx, row, caller, policy, newer[0])
    return _supersede(
        tx, replace(row, supersedes_id=first_id(replaced) or row.supersedes_id), replaced, caller, policy, reason
    )


def victims(
    tx: Transaction, row: NewMemory | MemoryRecord, policy: TenantPolicy, target_id: str | None
) -> list[MemoryRecord]:
    """Return the current facts ``row`` would replace: its target, else the slot's current value."""
    scope_key = row.scope.scope_key if isinstance(row, NewMemory) else row.scope_key
    target_id = target_id or row.supersedes_id
    if target_id is not None:
        target = tx.get_memory(scope_key, "MEMORY_FACT", target_id)
        if target is None:
            raise NotFoundError(f"no fact {target_id} in this scope", field="supersedesFactId")
        if target.status != "active":
            raise ConflictError(
                f"fact {target_id} is already {target.status}",
                field="supersedesFactId",
                status=target.status,
                supersededByFactId=target.superseded_by_id,
            )
        assert row.subject_key is not None and row.kind is not None
        if policy.is_multi_valued(row.kind) or (target.subject_key, target.kind) == (row.subject_key, row.kind):
            return [target]
        # A target in another slot: the slot written to keeps one current value all the same.
        others = [f for f in tx.active_facts(scope_key, row.subject_key, row.kind) if f.rowid != target.rowid]
        return [target, *others]
    assert row.subject_key is not None and row.kind is not None
    if policy.is_multi_valued(row.kind):
        return []
    return tx.active_facts(scope_key, row.subject_key, row.kind)


def newer_versions(
    tx: Transaction, row: NewMemory | MemoryRecord, policy: TenantPolicy, victims: list[MemoryRecord]
) -> list[MemoryRecord]:
    """What the age guard keeps ahead of ``row``, earliest first: current facts it would replace
    that are newer, and for a single-valued kind any version of the slot that held, retired
    (expired, or superseded and then its successor retracted) or not, starting later."""
    newer = [v for v in victims if _is_newer(v, row)]
    assert row.subject_key is not None and row.kind is not None
    if not policy.is_multi_valued(row.kind):
        scope_key = row.scope.scope_key if isinstance(row, NewMemory) else row.scope_key
        later = tx.retired_after(
            scope_key,
            row.subject_key,
            row.kind,
            valid_from=row.valid_from,
            recorded_at=row.recorded_at,
            but=row.memory_id,
        )
        retired = [f for f in later if _holds_somewhere(f)]  # later than ``row``: the read's own condition
        newer += retired
    return sorted(newer, key=lambda f: (f.valid_from or "", f.recorded_at))


def first_id(records: list[MemoryRecord]) -> str | None:
    return records[0].memory_id if records else None


def _insert(tx: Transaction, row: NewMemory, caller: Caller, action: str, reason: str | None = None) -> MemoryRecord:
    record = tx.insert_memory(row)
    if record is None:  # unreachable: the id was checked absent in this transaction
        raise ConflictError(f"fact {row.memory_id} already exists")
    tx.audit(
        caller.audit(
            action,
            target_kind="MEMORY_FACT",
            target_id=row.memory_id,
            scope_key=row.scope.scope_key,
            after_digest=state_digest(record),
            reason=reason,
        )
    )
    return record


def _park(tx: Transaction, row: NewMemory, caller: Caller, why: str) -> MemoryRecord:
    """Store a fact as pending review; its ``statusReason`` tells the reviewer why."""
    parked = replace(row, status="pending_review", active_from=None, status_reason=why)
    return _insert(tx, parked, caller, "fact.park", why)


def _tombstoned(tx: Transaction, row: NewMemory, caller: Caller, policy: TenantPolicy, tomb: Tombstone) -> FactOutcome:
    # The tombstone's id, not its reason: a reason copied here would outlive the fact's deletion, which
    # erases the reasons of its tombstones (the reviewer reads it from the tombstone).
    why = f"value tombstoned by {tomb.tombstone_id}"
    if policy.tombstone_policy == "review":
        return FactOutcome("parked", _park(tx, row, caller, why), tombstone=tomb)
    # The refusal is audited too (the transaction commits; the caller then answers 409).
    tx.audit(
        caller.audit(
            "fact.refuse", target_kind="MEMORY_FACT", target_id=row.memory_id, scope_key=row.scope.scope_key, reason=why
        )
    )
    return FactOutcome("refused", None, tombstone=tomb)


def _store_as_history(
    tx: Transaction, row: NewMemory, caller: Caller, policy: TenantPolicy, newer: MemoryRecord
) -> FactOutcome:
    # An older fact never supersedes a newer one: it is kept, already retired, as history.
    inserted = tx.insert_memory(replace(row, status="superseded", active_from=None))
    if inserted is None:  # unreachable: the id was checked absent in this transaction
        raise ConflictError(f"fact {row.memory_id} already exists")
    record = tx.set_status(
        inserted.rowid,
        status="superseded",
        retired_at=row.recorded_at,
        superseded_by=newer.memory_id,
        invalid_at=fit_into_slot(tx, inserted, caller, policy) or newer.valid_from,
        reason=f"older than fact {newer.memory_id} of the same slot",
    )
    tx.audit(  # the entry that wrote it records the state it was left in
        caller.audit(
            "fact.write",
            target_kind="MEMORY_FACT",
            target_id=row.memory_id,
            scope_key=row.scope.scope_key,
            after_digest=state_digest(record),
            reason=f"older than fact {newer.memory_id} of the same slot: stored as history",
        )
    )
    return FactOutcome("history", record, superseded=(record,))


def _holds_somewhere(fact: MemoryRecord) -> bool:
    """False for a version whose window is empty: corrected away, or an edited draft."""
    end = _held_until(fact)
    return fact.valid_from is not None and (end is None or end > fact.valid_from)


def _held_until(fact: MemoryRecord) -> str | None:
    """Where a fact stops holding (valid time): its validUntil or a successor's start."""
    ends = [t for t in (fact.valid_until, fact.invalid_at) if t]
    return min(ends) if ends else None


def fit_into_slot(tx: Transaction, fact: MemoryRecord, caller: Caller, policy: TenantPolicy) -> str | None:
    """Give a new version of a single-valued slot its place in valid time: one value per instant.

    A version whose window the fact's start falls into (validFrom at or before it) now stops
    there, audited as ``fact.close``; returns where the next version starts (``invalid_at`` for
    a fact stored as history). Otherwise an outbox replaying a turn late, or a value said after
    the current one was retracted, would leave two values holding at once. Multi-valued kinds
    hold several values by design: nothing to fit.
    """
    assert fact.subject_key is not None and fact.kind is not None and fact.valid_from is not None
    if policy.is_multi_valued(fact.kind):
        return None
    start = fact.valid_from
    # Retired versions that still hold at its start (an active one is a victim, retired already).
    for earlier in tx.covering(fact.scope_key, fact.subject_key, fact.kind, start=start, but=fact.rowid):
        before = state_digest(earlier)
        closed = tx.set_status(
            earlier.rowid,
            status=earlier.status,
            reason=earlier.status_reason,
            retired_at=earlier.retired_at,
            invalid_at=start,
        )
        tx.audit(
            caller.audit(
                "fact.close",
                target_kind="MEMORY_FACT",
                target_id=earlier.memory_id,
                scope_key=earlier.scope_key,
                before_digest=before,
                after_digest=state_digest(closed),
                reason=f"{fact.memory_id} holds from {start}",
            )
        )
    return tx.next_start(fact.scope_key, fact.subject_key, fact.kind, after=start, but=fact.rowid)


def _supersede(
    tx: Transaction,
    row: NewMemory,
    victims: list[MemoryRecord],
    caller: Caller,
    policy: TenantPolicy,
    reason: str | None,
) -> FactOutcome:
    now = row.recorded_at
    record = _insert(tx, replace(row, active_from=now), caller, "fact.write", reason)
    retired = []
    for victim in victims:
        retired.append(
            retire(
                tx,
                victim,
                caller,
                status="superseded",
                at=now,
                reason=reason or f"superseded by {row.memory_id}",
                successor=row.memory_id,
                invalid_at=row.valid_from,
                tombstone=value_hash(victim.text) != value_hash(row.text),
            )
        )
    fit_into_slot(tx, record, caller, policy)  # retired versions that still held at its start
    return FactOutcome("superseded" if retired else "created", record, superseded=tuple(retired))


def retire(
    tx: Transaction,
    fact: MemoryRecord,
    caller: Caller,
    *,
    status: str,
    at: str,
    reason: str | None,
    successor: str | None = None,
    invalid_at: str | None = None,
    tombstone: bool = True,
) -> MemoryRecord:
    """Retire an active fact (superseded, retracted, archived), tombstoning its value.

    A superseded fact stops holding (valid time) where its successor starts: ``invalid_at``.
    """
    before = state_digest(fact)
    record = tx.set_status(
        fact.rowid, status=status, reason=reason, retired_at=at, superseded_by=successor, invalid_at=invalid_at
    )
    action = _RETIRE_ACTIONS[status]
    tx.audit(
        caller.audit(
            action,
            target_kind="MEMORY_FACT",
            target_id=fact.memory_id,
            scope_key=fact.scope_key,
            before_digest=before,
            after_digest=state_digest(record),
            reason=reason,
        )
    )
    if tombstone:
        tomb = tx.add_tombstone(tombstone_for(fact, reason=reason, at=at, actor_key_id=caller.key_id))
        tx.audit(
            caller.audit(
                "tombstone.create",
                target_kind="tombstone",
                target_id=tomb.tombstone_id,
                scope_key=fact.scope_key,
                reason=reason,
            )
        )
    return record


def retract(tx: Transaction, scope_key: str, fact_id: str, caller: Caller, *, reason: str, at: str) -> MemoryRecord:
    """Retract an active fact: it stops being current and its value is tombstoned."""
    fact = active_fact(tx, scope_key, fact_id)
    return retire(tx, fact, caller, status="retracted", at=at, reason=reason)


def active_fact(tx: Transaction, scope_key: str, fact_id: str) -> MemoryRecord:
    """Return an active fact of the scope, or raise 404 / 409 (already retired)."""
    fact = tx.get_memory(scope_key, "MEMORY_FACT", fact_id)
    if fact is None:
        raise NotFoundError(f"no fact {fact_id} in this scope", id=fact_id)
    if fact.status != "active":
        raise ConflictError(
            f"fact {fact_id} is {fact.status}, not active",
            id=fact_id,
            status=fact.status,
            supersededByFactId=fact.superseded_by_id,
        )
    return fact
