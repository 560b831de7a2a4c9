"""Writing the knowledge plane: nested records with idempotent upserts, changes, links, deletes.

Every mutation is audited in the transaction that makes it. A record belongs to one scope; a
relationship joins two nodes of the same scope (another scope's node is not found, so not
linkable: no existence oracle).
"""

from __future__ import annotations

import json
from typing import Any

from engramdb import clock
from engramdb.audit_chain.states import record_digest, relationship_digest, relationship_id
from engramdb.contract.canonical import canonical_json
from engramdb.contract.events import ScopeFields
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.knowledge.importing import write_forest
from engramdb.core.knowledge.properties import (
    MAX_RECORDS,
    MAX_RELATIONSHIP_BYTES,
    MAX_VALUES,
    Draft,
    check_label,
    check_property,
    check_property_count,
    check_stored,
    draft,
    storable,
    value_count,
    values,
)
from engramdb.core.knowledge.views import NOUNS, key_for, mergeby_names, new_record, record_view, relationship_view
from engramdb.core.shared import Area
from engramdb.errors import ConflictError, InvalidInputError, NotFoundError
from engramdb.models.knowledge import (
    LinkRequest,
    NodeSpec,
    RecordChange,
    RecordOptions,
    RecordsWritten,
    RecordView,
    RelationshipView,
    Unlinked,
    UnlinkRequest,
)
from engramdb.storage.knowledge.port import NodeRef, RecordRow
from engramdb.storage.port import Transaction


class KnowledgeWriting(Area):
    """Records and relationships: write, change, link, unlink."""

    def write_records(self, caller: Caller, body: Any, query: RecordOptions | None = None) -> RecordsWritten:
        """Store records (nested children included); ``mergeBy`` makes a write idempotent."""
        auth.require(caller, "memory.write")
        scope = auth.scope_columns(self.shared.scope(caller, _named(body.scope)))
        roots = _drafts(body.label, body.data)
        merge_by = [check_property(name, "mergeBy") for name in body.merge_by or []]
        for root in roots:
            missing = [name for name in merge_by if name not in root.properties]
            if missing:
                raise InvalidInputError(
                    f"mergeBy names {missing[0]!r}, which {root.path} does not have", field="mergeBy"
                )
        origin = (query.origin if query else None) or "stated"
        with self.shared.tenant(caller).transaction() as tx:
            rows, tally = write_forest(tx, caller, scope, roots, merge_by, origin, clock.now_text())
        self.shared.written.set()
        return RecordsWritten(
            records=[record_view(row) for row in rows],
            created=tally.created,
            updated=tally.updated,
            unchanged=tally.unchanged,
            relationships=tally.relationships,
        )

    def update_record(self, caller: Caller, record_id: str, body: RecordChange) -> RecordView:
        """Set (or, with null, remove) properties of a record; the old ones go to its history."""
        auth.require(caller, "memory.write")
        scope = auth.scope_columns(self.shared.scope(caller, _named(body.scope)))
        with self.shared.tenant(caller).transaction() as tx:
            row = tx.locked_record(scope.scope_key, record_id)
            if row is None:
                raise NotFoundError(f"no record {record_id} in this scope", id=record_id)
            properties = {**json.loads(row.properties_json), **body.properties}
            node = draft(row.label, {k: v for k, v in properties.items() if v is not None}, "properties")
            if node.children:
                raise InvalidInputError(
                    "properties cannot hold nested records (write them as records and link them)", field="properties"
                )
            held = node.values()
            if held > MAX_VALUES:
                raise InvalidInputError(
                    f"properties hold {held} values once set; one record takes at most {MAX_VALUES}",
                    field="properties",
                )
            if canonical_json(node.properties) == row.properties_json:
                return record_view(row)
            key = _moved_key(tx, scope.scope_key, row, node.properties, body.properties)
            updated = tx.replace_properties(
                row, new_record(scope, node, node.properties, merge_key=key, origin=row.origin, at=clock.now_text())
            )
            _audit_record(tx, caller, "record.update", updated, before=row)
        self.shared.written.set()
        return record_view(updated)

    def link_records(self, caller: Caller, body: LinkRequest) -> RelationshipView:
        """Create a typed, directed relationship between two nodes of one scope (idempotent)."""
        auth.require(caller, "memory.write")
        scope_key = auth.scope_key(self.shared.scope(caller, _named(body.scope)))
        check_label(body.type, "type")
        properties: dict[str, Any] = {}
        check_property_count(len(body.properties), "properties")  # as a record's
        for name, value in body.properties.items():  # the values a record's properties may hold
            where = f"properties.{name}"
            check_property(name, where)
            if value is not None:
                properties[name] = storable(value, where)
                values(name, properties[name], where)
        held = value_count(properties)
        if held > MAX_VALUES:
            raise InvalidInputError(f"properties hold {held} values; the limit is {MAX_VALUES}", field="properties")
        stored = canonical_json(properties)
        check_stored(stored, MAX_RELATIONSHIP_BYTES, "properties", "relationship")
        tenant = self.shared.tenant(caller)
        source, target = (
            _node(tenant, scope_key, spec, side) for spec, side in ((body.source, "source"), (body.target, "target"))
        )
        with tenant.transaction() as tx:
            for node, spec, side in ((source, body.source, "source"), (target, body.target, "target")):
                if not tx.holds(scope_key, node):  # deleted since it was found: no edge to a reused rowid
                    raise InvalidInputError(
                        f"{side}.id: no {NOUNS[spec.kind]} {spec.id} in this scope", field=f"{side}.id"
                    )
            edge, created = tx.link(scope_key, body.type, source, target, stored, clock.now_text())
            if created:
                ends = (body.source.kind, body.source.id), (body.target.kind, body.target.id)
                tx.audit(
                    caller.audit(
                        "relationship.create",
                        target_kind="RELATIONSHIP",
                        scope_key=scope_key,
                        target_id=relationship_id(body.source.id, body.type, body.target.id),
                        after_digest=relationship_digest(scope_key, body.type, *ends, edge.properties_json),
                    )
                )
        return relationship_view(edge, {source: body.source.id, target: body.target.id})

    def unlink_records(self, caller: Caller, body: UnlinkRequest) -> Unlinked:
        auth.require(caller, "memory.write")
        scope_key = auth.scope_key(self.shared.scope(caller, _named(body.scope)))
        tenant = self.shared.tenant(caller)
        source = _node(tenant, scope_key, body.source, "source")
        target = _node(tenant, scope_key, body.target, "target")
        with tenant.transaction() as tx:
            deleted = tx.unlink(scope_key, body.type, source, target)
            if deleted:
                tx.audit(
                    caller.audit(
                        "relationship.delete",
                        target_kind="RELATIONSHIP",
                        scope_key=scope_key,
                        target_id=relationship_id(body.source.id, body.type, body.target.id),
                    )
                )
        return Unlinked(deleted=deleted)


def _named(scope: ScopeFields | None) -> dict[str, Any]:
    return scope.named_scope_fields() if scope else {}


def _drafts(label: str, data: Any) -> list[Draft]:
    check_label(label)
    items = data if isinstance(data, list) else [data]
    if not items:
        raise InvalidInputError("data holds no record", field="data")
    paths = [f"data[{i}]" for i in range(len(items))] if isinstance(data, list) else ["data"]
    roots = [draft(label, item, path) for item, path in zip(items, paths, strict=True)]
    total = sum(root.count() for root in roots)
    if total > MAX_RECORDS:
        raise InvalidInputError(f"data holds {total} records; one write takes at most {MAX_RECORDS}", field="data")
    held = sum(root.values() for root in roots)
    if held > MAX_VALUES:
        raise InvalidInputError(
            f"data holds {held} values (a list's items count one each); one write takes at most {MAX_VALUES}",
            field="data",
        )
    return roots


def _node(tenant: Any, scope_key: str, spec: NodeSpec, side: str) -> NodeRef:
    rowid = tenant.node_rowid(scope_key, spec.kind, spec.id)
    if rowid is None:  # another scope's node is not found either: 422, not 403 (no existence oracle)
        raise InvalidInputError(f"{side}.id: no {NOUNS[spec.kind]} {spec.id} in this scope", field=f"{side}.id")
    return NodeRef(spec.kind, rowid)


def _audit_record(
    tx: Transaction, caller: Caller, action: str, row: RecordRow, before: RecordRow | None = None
) -> None:
    tx.audit(
        caller.audit(
            action,
            target_kind="RECORD",
            target_id=row.record_id,
            scope_key=row.scope_key,
            before_digest=record_digest(before) if before else None,
            after_digest=record_digest(row),
        )
    )


def _moved_key(
    tx: Transaction, scope_key: str, row: RecordRow, properties: dict[str, Any], changed: dict[str, Any]
) -> str | None:
    """The record's merge key once it holds ``properties``: made again from its mergeBy values, so
    that a write by the new values finds it and one by the old values no longer does. Another
    record of its label that has that key already is a conflict (409): two may not share one."""
    key, identity = tx.merge_state(row.rowid)
    names = mergeby_names(identity)
    if names is None:  # not merged by values (a child by its content), or written before they were kept
        return key
    if key is not None and key != key_for(row.label, names, json.loads(row.properties_json)):
        return key  # names that do not make its key (an edited import file): kept as it is
    moved = key_for(row.label, names, properties)
    if moved is not None and moved != key:
        other = tx.merged_many(scope_key, row.label, [moved]).get(moved)
        if other is not None and other.rowid != row.rowid:
            name = next((n for n in names if n in changed), next(iter(changed)))
            raise ConflictError(
                f"record {other.record_id} of label {row.label} has these mergeBy values already",
                field=f"properties.{name}",
                id=other.record_id,
            )
    return moved
