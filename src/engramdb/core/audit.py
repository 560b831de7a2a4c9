"""Verifying the hash-chained audit log: recompute every entry's hash from the first one.

Pure: the chain's hash is defined in engramdb/audit_chain.py (every backend stores it); the types
here are structural, so this module needs nothing from storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from engramdb.audit_chain import GENESIS_HASH, AuditFields, chain_hash, reason_digest

PAGE = 1_000


class ChainedEntry(AuditFields, Protocol):
    """A stored entry: its fields, its place in the chain and its hash."""

    @property
    def seq(self) -> int: ...
    @property
    def at(self) -> str: ...
    @property
    def prev_hash(self) -> str: ...
    @property
    def hash(self) -> str: ...
    @property
    def reason_digest(self) -> str | None: ...
    @property
    def reason_nonce(self) -> str | None: ...


class AuditLog(Protocol):
    """Where verification reads a tenant's entries from (a storage TenantStore is one)."""

    def audit_entries(self, after_seq: int, limit: int) -> Sequence[ChainedEntry]: ...


@dataclass(frozen=True)
class Verdict:
    """The result of a verification: how many entries were checked, the head they end at (its
    hash; None for an empty chain) and the first bad one."""

    checked: int
    broken_seq: int | None = None
    problem: str | None = None
    head_hash: str | None = None

    @property
    def ok(self) -> bool:
        return self.broken_seq is None


def verify(tenant: AuditLog) -> Verdict:
    """Recompute the chain from the first entry; stop at the first entry that does not hold."""
    expected_seq, prev_hash, checked, after = 1, GENESIS_HASH, 0, 0
    while entries := tenant.audit_entries(after, PAGE):
        for entry in entries:
            if entry.seq != expected_seq:
                return Verdict(checked, expected_seq, f"entry {expected_seq} is missing")
            if entry.prev_hash != prev_hash:
                return Verdict(checked, entry.seq, "prevHash does not match the previous entry")
            if (
                chain_hash(entry, seq=entry.seq, at=entry.at, prev_hash=prev_hash, reason_digest=entry.reason_digest)
                != entry.hash
            ):
                return Verdict(checked, entry.seq, "content does not match its hash (edited)")
            if not _reason_holds(entry):
                return Verdict(checked, entry.seq, "reason does not match its digest (edited)")
            prev_hash, expected_seq, checked = entry.hash, expected_seq + 1, checked + 1
        after = entries[-1].seq
    return Verdict(checked, head_hash=None if checked == 0 else prev_hash)


def _reason_holds(entry: ChainedEntry) -> bool:
    """True unless a reason kept beside its digest was edited (an erased reason holds: it is gone)."""
    if entry.reason_digest is None or entry.reason is None:
        return True
    return reason_digest(entry.reason, entry.reason_nonce or "") == entry.reason_digest
