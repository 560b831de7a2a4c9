"""Backend-neutral pieces both stores share: chaining an audit entry, walking a fact's versions,
expiring facts, the term-count cache, a recall arm's span. Each backend supplies only its SQL."""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from operator import attrgetter
from typing import Any, Generic, TypeVar

from engramdb.audit_chain import GENESIS_HASH, chain_hash, reason_digest
from engramdb.audit_chain.states import memory_digest
from engramdb.errors import AuthenticationError
from engramdb.storage.port import (
    AuditDraft,
    AuditEntry,
    MemoryRecord,
    NewMemory,
    Transaction,
)


def acting_keys(drafts: Sequence[AuditDraft]) -> list[str]:
    """The keys whose writes ``drafts`` record, checked in the write itself: a key revoked after its
    request was authenticated (while it waited for a thread, say) must not write. A key's revoke of
    itself is left out: it is revoked in that very write."""
    acting = {
        d.actor_key_id for d in drafts if d.actor_key_id and (d.action, d.target_id) != ("key.revoke", d.actor_key_id)
    }
    return sorted(acting)


def refuse_revoked() -> AuthenticationError:
    return AuthenticationError("this key was revoked")


def next_audit_entry(draft: AuditDraft, last: Sequence[Any] | None, at: str) -> AuditEntry:
    """Return the entry that follows ``last`` (its ``(seq, hash)``, or None for the first)."""
    seq, prev_hash = (int(last[0]) + 1, str(last[1])) if last else (1, GENESIS_HASH)
    nonce = secrets.token_hex(16) if draft.reason is not None else None
    digest = reason_digest(draft.reason, nonce) if draft.reason is not None and nonce else None
    return AuditEntry(
        seq,
        at,
        draft.action,
        draft.actor_key_id,
        draft.actor_role,
        draft.target_kind,
        draft.target_id,
        draft.scope_key,
        draft.before_digest,
        draft.after_digest,
        draft.reason,
        prev_hash,
        chain_hash(draft, seq=seq, at=at, prev_hash=prev_hash, reason_digest=digest),
        digest,
        nonce,
    )


def loaded_audits(rows: Sequence[NewMemory], audits: Sequence[AuditDraft], new: set[str]) -> list[AuditDraft]:
    """The audit drafts of the rows a bulk load inserted (``new``: their ids), each recording the
    state the row was stored in, as the write path's entries do (whatever digest the draft had)."""
    by_id = {row.memory_id: row for row in rows if row.memory_id in new}
    return [
        replace(draft, after_digest=memory_digest(_as_stored(by_id[draft.target_id])))
        for draft in audits
        if draft.target_id in by_id
    ]


def _as_stored(row: NewMemory) -> MemoryRecord:
    return MemoryRecord(
        0,
        row.source,
        row.memory_id,
        row.scope.scope_key,
        row.text,
        row.trust_class,
        row.origin,
        row.status,
        row.confidence,
        row.observed_at,
        row.recorded_at,
        row.event_json,
        "ready",
        None,
        0,
        session_id=row.session_id,
        subject_key=row.subject_key,
        kind=row.kind,
        valid_from=row.valid_from,
        valid_until=row.valid_until,
        supersedes_id=row.supersedes_id,
        status_reason=row.status_reason,
        active_from=row.active_from,
    )


def expire_rows(tx: Transaction, rowids: Sequence[int], now: str, actor: AuditDraft) -> int:
    """Mark rows expired (their validUntil passed) and audit each as ``actor``."""
    for rowid in rowids:
        record = tx.set_status(rowid, status="expired", reason="validUntil passed", retired_at=now)
        tx.audit(
            AuditDraft(
                action="fact.expire",
                actor_key_id=actor.actor_key_id,
                actor_role=actor.actor_role,
                target_kind=record.source,
                target_id=record.memory_id,
                scope_key=record.scope_key,
                after_digest=memory_digest(record),
                reason="validUntil passed",
            )
        )
    return len(rowids)


K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A small thread-safe least-recently-used map."""

    def __init__(self, capacity: int) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)


def row_values(row: Any) -> tuple[Any, ...]:
    """A flat dataclass row's values in field order, as a statement's parameters: ``astuple``
    without its deep copy of every value (a fifth of an episode write's audit)."""
    getter = _GETTERS.get(type(row))
    if getter is None:
        getter = _GETTERS[type(row)] = _getter([f.name for f in fields(row)])
    values: tuple[Any, ...] = getter(row)
    return values


def _getter(names: list[str]) -> Callable[[Any], Any]:
    if len(names) > 1:
        return attrgetter(*names)  # a tuple of the values
    return lambda row: tuple(getattr(row, name) for name in names)  # attrgetter of one gives it bare


_GETTERS: dict[type, Callable[[Any], Any]] = {}  # by row class
