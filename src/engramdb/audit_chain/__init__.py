"""How an audit entry is chained to the one before it: the hash every backend stores.

Pure, and below both core and storage: a backend chains an entry in the transaction that writes
it, and ``engram audit verify`` (core/audit.py) recomputes the same hash.
"""

from __future__ import annotations

from typing import Protocol

from engramdb.contract.canonical import canonical_json, sha256_hex

GENESIS_HASH = "0" * 64  # the prevHash of a tenant's first entry


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
