"""The hash-chained audit log: how an entry is chained to the one before it, and verification.

Pure: every backend stores the hash ``chain_hash`` returns, and ``engram audit verify``
recomputes it. The types here are structural, so this module needs nothing from storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from engramdb.contract.canonical import canonical_json, sha256_hex

GENESIS_HASH = "0" * 64  # the prevHash of a tenant's first entry
PAGE = 1_000


class AuditFields(Protocol):
    """What the chain covers of an entry besides its place (a draft has these before it is chained)."""

    @property
    def action(self) -> str: ...
    @property
    def actor_key_id(self) -> str | None: ...
    @property
    def actor_role(self) -> str | None: ...
    @property
    def target_kind(self) -> str | None: ...
    @property
    def target_id(self) -> str | None: ...
    @property
    def scope_key(self) -> str | None: ...
    @property
    def before_digest(self) -> str | None: ...
    @property
    def after_digest(self) -> str | None: ...
    @property
    def reason(self) -> str | None: ...


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


def reason_digest(reason: str, nonce: str) -> str:
    """Return what the chain covers of a reason: a digest salted with a random nonce kept beside
    the text, so that erasing both leaves nothing to guess the text back from."""
    return sha256_hex(canonical_json({"nonce": nonce, "reason": reason}))


def chain_hash(entry: AuditFields, *, seq: int, at: str, prev_hash: str, reason_digest: str | None = None) -> str:
    """Return the hash that chains an audit entry to its predecessor.

    Editing any field of any entry, or removing one, breaks the chain from that entry on. With
    ``reason_digest`` the chain covers the reason's digest instead of its text, so the text (free,
    possibly personal) can be erased without breaking the chain; entries written before reasons
    had digests cover the text itself.
    """
    payload = {
        "seq": seq,
        "at": at,
        "action": entry.action,
        "actorKeyId": entry.actor_key_id,
        "actorRole": entry.actor_role,
        "targetKind": entry.target_kind,
        "targetId": entry.target_id,
        "scopeKey": entry.scope_key,
        "beforeDigest": entry.before_digest,
        "afterDigest": entry.after_digest,
        "reason": entry.reason,
        "prevHash": prev_hash,
    }
    if reason_digest is not None:
        del payload["reason"]
        payload["reasonDigest"] = reason_digest
    return sha256_hex(canonical_json(payload))


@dataclass(frozen=True)
class Verdict:
    """The result of a verification: how many entries were checked and the first bad one."""

    checked: int
    broken_seq: int | None = None
    problem: str | None = None

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
    return Verdict(checked)


def _reason_holds(entry: ChainedEntry) -> bool:
    """True unless a reason kept beside its digest was edited (an erased reason holds: it is gone)."""
    if entry.reason_digest is None or entry.reason is None:
        return True
    return reason_digest(entry.reason, entry.reason_nonce or "") == entry.reason_digest
