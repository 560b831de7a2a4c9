"""Stored records and relationships as the models every surface shows; requests as stored rows."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.core.knowledge.properties import MAX_RECORD_BYTES, Draft, check_stored, values
from engramdb.models.knowledge import NodeView, RecordView, RelationshipView
from engramdb.storage.knowledge.port import Edge, NewRecord, NodeRef, RecordRow
from engramdb.storage.rows import ScopeColumns

NOUNS = {"RECORD": "record", "EPISODE": "episode", "MEMORY_FACT": "fact"}
MIN_EMBEDDED = 8  # shorter strings (a status, a name) are matched by the where, not by meaning


def new_record_id() -> str:
    """A server-made id: 48 bits of milliseconds then 80 random bits, as 32 hex (sorts by time)."""
    return f"{int(time.time() * 1000):012x}{os.urandom(10).hex()}"


def record_view(row: RecordRow, score: float | None = None) -> RecordView:
    return RecordView(
        id=row.record_id,
        label=row.label,
        properties=json.loads(row.properties_json),
        origin=row.origin,
        version=row.version,
        created_at=row.created_at,
        updated_at=row.updated_at,
        score=score,
    )


def relationship_view(edge: Edge, ids: Mapping[NodeRef, str]) -> RelationshipView:
    return RelationshipView(
        type=edge.type,
        source=NodeView(kind=edge.source.kind, id=ids[edge.source]),
        target=NodeView(kind=edge.target.kind, id=ids[edge.target]),
        properties=json.loads(edge.properties_json),
        created_at=edge.created_at,
    )


def new_record(
    scope: ScopeColumns,
    draft: Draft,
    properties: Mapping[str, Any],
    *,
    merge_key: str | None,
    origin: str,
    at: str,
    merge_identity: str | None = None,
) -> NewRecord:
    """The storage row of a record with ``properties``."""
    typed = tuple(v for name, value in properties.items() for v in values(name, value, f"{draft.path}.{name}"))
    texts = tuple(
        (name, value)
        for name, value in properties.items()
        if isinstance(value, str)
        and len(value) >= MIN_EMBEDDED
        and any(c.isalpha() for c in value)
        and not any(v.kind == "datetime" for v in typed if v.name == name)
    )
    stored = canonical_json(dict(properties))
    check_stored(stored, MAX_RECORD_BYTES, draft.path, "record")
    return NewRecord(
        scope=scope,
        record_id=new_record_id(),
        label=draft.label,
        properties_json=stored,
        values=typed,
        texts=texts,
        merge_key=merge_key,
        origin=origin,
        at=at,
        merge_identity=merge_identity,
    )


def merge_key(label: str, identity: Mapping[str, Any]) -> str:
    """The digest that identifies a record of ``label`` among those merged by the same values."""
    return sha256_hex(canonical_json({"label": label, "identity": dict(identity)}))


def child_key(parent_id: str, relation: str, draft: Draft) -> str:
    """A nested record without mergeBy values is identified by its content under its parent."""
    return merge_key(draft.label, {"parent": parent_id, "relation": relation, "properties": draft.properties})


def merged_by(names: Sequence[str]) -> str:
    """How the key of a record merged by ``names`` is made (stored beside the key)."""
    return canonical_json({"mergeBy": list(names)})


def mergeby_names(identity: str | None) -> list[str] | None:
    """The names ``merged_by`` kept; None when there are none, or what is kept is not that (a
    hand-edited import file): the record's key then stays as it is."""
    try:
        names = json.loads(identity)["mergeBy"] if identity is not None else None
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        return None
    return names


def key_for(label: str, names: Sequence[str], properties: Mapping[str, Any]) -> str | None:
    """The merge key a record of ``label`` merged by ``names`` has when it holds ``properties``;
    None once one of them is gone."""
    if not all(name in properties for name in names):
        return None
    return merge_key(label, {name: properties[name] for name in names})


def by_id(rows: Sequence[RecordRow]) -> dict[int, RecordRow]:
    return {row.rowid: row for row in rows}
