"""What an audit entry's before/after digest covers of the row it is about: the state that decides
what a read returns or who may read it.

Pure, and below both core and storage: core digests a row when it audits a change to it, storage
when it audits one itself (expiry, bulk loads, the migration that covers older rows), and
``engram audit verify`` digests every current row and holds it to the last entry about it.

A row's state is split into **field classes** (a fact's lifecycle, its trust, its scope, ...). Its
digest is ``<SHA-256 of every class>.<fingerprint of each class>``: the SHA-256 is what proves the
row unchanged; the fingerprints (8 hex digits per class, in the kind's order) only let a verifier
name *which* class changed. Editing a row so that a fingerprint still matches shows all the same.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol

from engramdb.contract.canonical import sha256_hex

DIGEST_SCHEME = "2"  # meta ``audit_digests``: a tenant's rows are covered by these digests (see storage/coverage.py)
Classes = dict[str, dict[str, Any]]
MEMORY_CLASSES = ("scope", "content", "trust", "lifecycle", "marks")
RECORD_CLASSES = ("scope", "label", "properties", "origin")
RELATIONSHIP_CLASSES = ("scope", "ends", "properties")
KEY_CLASSES = ("role", "grant", "secret", "revocation")
_PRINT = 8  # hex digits of a class's fingerprint


class MemoryState(Protocol):
    """An episode or a fact as stored (a storage ``MemoryRecord`` is one)."""

    @property
    def memory_id(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def scope_key(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def event_json(self) -> str: ...
    @property
    def trust_class(self) -> str: ...
    @property
    def origin(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def observed_at(self) -> str: ...
    @property
    def recorded_at(self) -> str: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def subject_key(self) -> str | None: ...
    @property
    def kind(self) -> str | None: ...
    @property
    def valid_from(self) -> str | None: ...
    @property
    def valid_until(self) -> str | None: ...
    @property
    def retired_at(self) -> str | None: ...
    @property
    def supersedes_id(self) -> str | None: ...
    @property
    def superseded_by_id(self) -> str | None: ...
    @property
    def status_reason(self) -> str | None: ...
    @property
    def active_from(self) -> str | None: ...
    @property
    def invalid_at(self) -> str | None: ...
    @property
    def pinned(self) -> int | bool | None: ...
    @property
    def importance(self) -> float | None: ...


class RecordState(Protocol):
    """A record of the knowledge plane as stored (a storage ``RecordRow`` is one)."""

    @property
    def record_id(self) -> str: ...
    @property
    def scope_key(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def properties_json(self) -> str: ...
    @property
    def origin(self) -> str: ...
    @property
    def version(self) -> int: ...


class KeyState(Protocol):
    """An API key as stored (a storage ``KeyRecord`` is one)."""

    @property
    def role(self) -> str: ...
    @property
    def grant_json(self) -> str: ...
    @property
    def secret_hash(self) -> str: ...
    @property
    def revoked_at(self) -> str | None: ...


def digest(classes: Classes) -> str:
    """The digest of a row's state given as its field classes, in the kind's order."""
    encoded = [(name, _encode(fields)) for name, fields in classes.items()]
    whole = "\x1e".join(f"{name}\x1f{text}" for name, text in encoded)
    return f"{_sha256(whole)}.{''.join(_sha256(text)[:_PRINT] for _, text in encoded)}"


def changed_classes(recorded: str | None, classes: Classes) -> list[str]:
    """The classes of ``classes`` whose fingerprint differs from the one ``recorded`` holds (every
    class when ``recorded`` is no digest of this kind's classes)."""
    _, _, prints = (recorded or "").partition(".")
    if len(prints) != _PRINT * len(classes):
        return list(classes)
    return [
        name
        for i, (name, fields) in enumerate(classes.items())
        if prints[i * _PRINT : (i + 1) * _PRINT] != _sha256(_encode(fields))[:_PRINT]
    ]


def _encode(fields: dict[str, Any]) -> str:
    # Only this code reads these digests, so an unambiguous encoding of its own (fields in the order
    # the code lists them, each value tagged and strings length-prefixed) is enough, and several
    # times faster than canonical JSON (a tenant may hold a million rows to digest).
    return "".join(f"{name}={_value(value)};" for name, value in fields.items())


def _value(value: Any) -> str:
    if value is None:
        return "~"
    if isinstance(value, bool):
        return "T" if value else "F"
    if isinstance(value, int | float):  # one form for both: a backend may hand back 1 for 1.0
        return f"n{float(value)!r}"
    if isinstance(value, str):
        return f"s{len(value)}:{value}"
    return "j" + _value(json.dumps(value, sort_keys=True, separators=(",", ":")))  # lists, a grant's object


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def memory_classes(m: MemoryState) -> Classes:
    """An episode's or a fact's state: where it lives, what it says, how far it is trusted, where it
    is in its lifecycle (retirement included) and a person's marks."""
    return {
        "scope": {"scopeKey": m.scope_key},
        "content": {
            "id": m.memory_id,
            "source": m.source,
            "event": _sha256(m.event_json),
            "text": _sha256(m.text),
            "session": m.session_id,
            "subject": m.subject_key,
            "kind": m.kind,
            "confidence": m.confidence,
            "observedAt": m.observed_at,
            "recordedAt": m.recorded_at,
            "validFrom": m.valid_from,
            "validUntil": m.valid_until,
        },
        "trust": {"trustClass": m.trust_class, "origin": m.origin},
        "lifecycle": {
            "status": m.status,
            "reason": m.status_reason,
            "activeFrom": m.active_from,
            "retiredAt": m.retired_at,
            "supersedes": m.supersedes_id,
            "supersededBy": m.superseded_by_id,
            "invalidAt": m.invalid_at,
        },
        "marks": {"pinned": bool(m.pinned), "importance": m.importance},
    }


def memory_digest(m: MemoryState) -> str:
    return digest(memory_classes(m))


def record_classes(r: RecordState) -> Classes:
    """A record's state: its scope, its label, its properties (and their version), its origin."""
    return {
        "scope": {"scopeKey": r.scope_key},
        "label": {"id": r.record_id, "label": r.label},
        "properties": {"properties": _sha256(r.properties_json), "version": r.version},
        "origin": {"origin": r.origin},
    }


def record_digest(r: RecordState) -> str:
    return digest(record_classes(r))


def relationship_id(source_id: str, type: str, target_id: str) -> str:
    """The target id an audit entry names a relationship by (its ends by their public ids)."""
    return f"{source_id}-{type}->{target_id}"


def relationship_classes(
    scope_key: str, type: str, source: tuple[str, str], target: tuple[str, str], properties_json: str
) -> Classes:
    """A relationship's state: its scope, its type and ends (each ``(kind, id)``), its properties."""
    return {
        "scope": {"scopeKey": scope_key},
        "ends": {"type": type, "source": list(source), "target": list(target)},
        "properties": {"properties": _sha256(properties_json)},
    }


def relationship_digest(
    scope_key: str, type: str, source: tuple[str, str], target: tuple[str, str], properties_json: str
) -> str:
    return digest(relationship_classes(scope_key, type, source, target, properties_json))


def key_classes(key: KeyState) -> Classes:
    """An API key's state: its role, its scope grant, its secret's hash, its revocation."""
    try:
        grant: Any = json.loads(key.grant_json)
    except ValueError:  # not what the server writes: digested as it stands
        grant = key.grant_json
    return {
        "role": {"role": key.role},
        "grant": {"grant": grant},
        "secret": {"secretHash": key.secret_hash},
        "revocation": {"revokedAt": key.revoked_at},
    }


def key_digest(key: KeyState) -> str:
    return digest(key_classes(key))


def value_digest(value: str) -> str:
    """A tenant setting's digest (its policy document, its participant salt): SHA-256 of the text."""
    return sha256_hex(value)
