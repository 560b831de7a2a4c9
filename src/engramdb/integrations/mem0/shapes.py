"""Mem0's shapes: what a memory, a search hit and a history row look like, and Mem0's labels
(``agent_id``, ``run_id``, ``role``, ``actor_id``, ``metadata``) kept with each fact.

A Mem0 memory is a lineage of EngramDB fact versions: its id is the first version's factId (Mem0
users keep the id across updates), its text the current version's, ``created_at`` the first
version's record time and ``updated_at`` the current one's.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from engramdb.contract.canonical import canonical_json
from engramdb.errors import InvalidInputError
from engramdb.models.memories import MemoryView

LABELS = "mem0/2:"  # provenance of what Memory writes: the labels follow as JSON
OLD_LABELS = "mem0:"  # written before issue 31: the metadata alone followed
PROMOTED = ("user_id", "agent_id", "run_id", "actor_id", "role", "expiration_date")  # Mem0's top-level keys
_NAMESPACE = uuid.UUID("1b0e8a2c-4f7e-4d62-9a57-0e2f9b4d3c11")  # history row ids, derived from version ids


@dataclass(frozen=True)
class Lineage:
    """The versions of one Mem0 memory, oldest first (one, for a memory never updated)."""

    versions: tuple[MemoryView, ...]

    @property
    def root(self) -> MemoryView:
        return self.versions[0]

    @property
    def current(self) -> MemoryView:
        return self.versions[-1]

    @property
    def deleted(self) -> bool:
        return self.current.status not in ("active", "pending_review")


def provenance(labels: Mapping[str, Any]) -> str:
    """The provenance that keeps a memory's Mem0 labels (JSON of at most 505 characters)."""
    kept = {k: v for k, v in labels.items() if v not in (None, {}, "")}
    text = LABELS + canonical_json(kept)
    if len(text) > 512:
        raise InvalidInputError(
            "metadata, agent_id, run_id and role are kept with the memory as JSON of at most 505 characters",
            field="metadata",
        )
    return text


def labels_of(view: MemoryView) -> dict[str, Any]:
    """A memory's Mem0 labels (empty for one Memory did not write)."""
    text = str(view.event.get("provenance", ""))
    for prefix in (LABELS, OLD_LABELS):
        if text.startswith(prefix) and len(text) > len(prefix):
            try:
                loaded = json.loads(text[len(prefix) :])
            except ValueError:
                return {}
            if not isinstance(loaded, dict):
                return {}
            return loaded if prefix == LABELS else {"metadata": loaded}
    return {}


def text_of(view: MemoryView) -> str:
    event = view.event
    if view.source == "MEMORY_FACT":
        return str(event.get("text", ""))
    return "\n".join(t for t in (event.get("userText"), event.get("assistantText")) if t)


def iso(stamp: str | None) -> str | None:
    """A record time as Mem0 writes one (``datetime.isoformat``, UTC as +00:00)."""
    if not stamp:
        return None
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).isoformat()


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def item(lineage: Lineage, user_id: str | None, *, score: float | None = None) -> dict[str, Any]:
    """A memory in Mem0's shape (``MemoryItem`` plus the promoted labels)."""
    current, labels = lineage.current, labels_of(lineage.current)
    text = text_of(current)
    shaped: dict[str, Any] = {
        "id": lineage.root.id,
        "memory": text,
        "hash": md5(text),
        "metadata": labels.get("metadata") or None,
        "score": score,
        "created_at": iso(lineage.root.recorded_at),
        "updated_at": iso(current.retired_at if lineage.deleted else current.recorded_at),
    }
    promoted = {"user_id": user_id, **labels, "expiration_date": expiration_of(current)}
    shaped |= {k: promoted[k] for k in PROMOTED if promoted.get(k) is not None}
    if current.status != "active":  # waiting for review, or retired: said, never shown as current
        shaped["status"] = current.status
    return shaped


def valid_until(value: Any) -> str | None:
    """Mem0's ``expiration_date`` (a date) as the fact's ``validUntil``: it holds through that day."""
    if value is None:
        return None
    try:
        day = datetime.fromisoformat(str(value)[:10]).date()
    except ValueError:
        raise InvalidInputError(
            "expiration_date must be a date in YYYY-MM-DD format", field="expiration_date"
        ) from None
    return f"{(day + timedelta(days=1)).isoformat()}T00:00:00Z"


def expiration_of(view: MemoryView) -> str | None:
    until = view.event.get("validUntil")
    if not until:
        return None
    return (datetime.fromisoformat(str(until).replace("Z", "+00:00")) - timedelta(days=1)).date().isoformat()


def history(lineage: Lineage) -> list[dict[str, Any]]:
    """Mem0's history rows, oldest first: ADD, an UPDATE per correction, DELETE for a retraction."""
    created = iso(lineage.root.recorded_at)
    rows: list[dict[str, Any]] = []
    previous: str | None = None
    for version in lineage.versions:
        text = text_of(version)
        if previous is not None and text == previous and rows:
            continue  # a change of labels alone: the text did not move
        rows.append(_row(version, "UPDATE" if rows else "ADD", previous, text, created, iso(version.recorded_at)))
        previous = text
    if lineage.deleted:
        last = lineage.current
        rows.append(_row(last, "DELETE", previous, None, created, iso(last.retired_at), deleted=True))
    return [{**r, "memory_id": lineage.root.id} for r in rows]


def _row(
    version: MemoryView,
    event: str,
    old: str | None,
    new: str | None,
    created: str | None,
    updated: str | None,
    *,
    deleted: bool = False,
) -> dict[str, Any]:
    labels = labels_of(version)
    return {
        "id": str(uuid.uuid5(_NAMESPACE, f"{version.id}:{event}")),
        "memory_id": None,
        "old_memory": old,
        "new_memory": new,
        "event": event,
        "created_at": created,
        "updated_at": updated,
        "is_deleted": deleted,
        "actor_id": labels.get("actor_id"),
        "role": labels.get("role"),
    }
