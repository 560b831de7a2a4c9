"""Writing nested records in bulk: level by level, each level a handful of statements.

A level's records are looked up by their merge keys in one query per label, the new ones are
inserted together (with their values and texts), the changed ones updated, the links to their
parents made together, and every mutation audited in one append. A record that appears twice
in one write (the same mergeBy values, or the same child content under the same parent) is one
record: its properties are merged in the order written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from engramdb.audit_chain.states import record_digest, relationship_digest, relationship_id
from engramdb.contract.canonical import canonical_json
from engramdb.core.auth import Caller
from engramdb.core.knowledge.properties import Draft, check_property_count
from engramdb.core.knowledge.views import child_key, key_for, merged_by, new_record
from engramdb.errors import InternalError
from engramdb.storage.knowledge.port import NodeRef, RecordRow
from engramdb.storage.port import AuditDraft, Transaction
from engramdb.storage.rows import ScopeColumns


@dataclass
class Tally:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    relationships: int = 0


@dataclass
class _Group:
    """The drafts of one record in this write (one, unless it is repeated)."""

    key: str | None
    identity: str | None  # how the key is made (views.key_for)
    drafts: list[Draft]
    parents: list[tuple[RecordRow, str]] = field(default_factory=list)  # (parent, relationship type)
    row: RecordRow | None = None

    def properties(self) -> dict[str, object]:
        merged: dict[str, object] = {}
        for draft in self.drafts:
            merged.update(draft.properties)
        return merged


def write_forest(
    tx: Transaction,
    caller: Caller,
    scope: ScopeColumns,
    roots: Sequence[Draft],
    merge_by: Sequence[str],
    origin: str,
    at: str,
) -> tuple[list[RecordRow], Tally]:
    """Write ``roots`` and everything nested under them; the roots' rows, in order, and the tally."""
    tally = Tally()
    level: list[tuple[Draft, tuple[RecordRow, str] | None]] = [(root, None) for root in roots]
    top: list[_Group] = []
    while level:
        groups, of_draft = _grouped(level, merge_by)
        audits = _upsert(tx, caller, scope, groups, origin, at, tally)
        audits += _link_parents(tx, caller, scope, groups, at, tally)
        tx.audit_many(audits)
        if not top:
            top = [of_draft[id(root)] for root in roots]
        level = [
            (child, (group.row, relation))
            for group in groups
            if group.row is not None
            for draft in group.drafts
            for relation, child in draft.children
        ]
    return [group.row for group in top if group.row is not None], tally


def _grouped(
    level: Sequence[tuple[Draft, tuple[RecordRow, str] | None]], merge_by: Sequence[str]
) -> tuple[list[_Group], dict[int, _Group]]:
    groups: dict[object, _Group] = {}
    of_draft: dict[int, _Group] = {}
    for draft, parent in level:
        key, identity = _key(draft, parent, merge_by)
        ident: object = (draft.label, key) if key is not None else id(draft)
        group = groups.setdefault(ident, _Group(key, identity, []))
        group.drafts.append(draft)
        if parent is not None:
            group.parents.append(parent)
        of_draft[id(draft)] = group
    return list(groups.values()), of_draft


def _key(draft: Draft, parent: tuple[RecordRow, str] | None, merge_by: Sequence[str]) -> tuple[str | None, str | None]:
    """The draft's merge key, and how it is made when that is by its mergeBy values (a child known by
    its content under its parent keeps the key of the content it was written with: writing that
    content under that parent again finds it, whatever a PATCH made of it since)."""
    key = key_for(draft.label, merge_by, draft.properties) if merge_by else None
    if key is not None:
        return key, merged_by(merge_by)
    return (child_key(parent[0].record_id, parent[1], draft) if parent else None), None


def _upsert(
    tx: Transaction,
    caller: Caller,
    scope: ScopeColumns,
    groups: Sequence[_Group],
    origin: str,
    at: str,
    tally: Tally,
) -> list[AuditDraft]:
    existing: dict[tuple[str, str], RecordRow] = {}
    for label in {g.drafts[0].label for g in groups if g.key is not None}:
        keys = [g.key for g in groups if g.key is not None and g.drafts[0].label == label]
        existing.update(((label, k), row) for k, row in tx.merged_many(scope.scope_key, label, keys).items())
    audits, fresh = [], []
    for group in groups:
        draft, properties = group.drafts[0], group.properties()
        check_property_count(len(properties), draft.path, "the items merged in this write")
        stored = existing.get((draft.label, group.key)) if group.key is not None else None
        if stored is None:
            record = new_record(
                scope, draft, properties, merge_key=group.key, origin=origin, at=at, merge_identity=group.identity
            )
            fresh.append((group, record))
            continue
        merged = {**json.loads(stored.properties_json), **properties}
        # Each write within the limit, their sum not: the record they grow is checked too.
        check_property_count(len(merged), draft.path, f"record {stored.record_id} once merged")
        if canonical_json(merged) == stored.properties_json:
            tally.unchanged += 1
            group.row = stored
            continue
        tally.updated += 1
        # A merge by mergeBy values keeps them beside the key (a record written before they were kept learns them).
        record = new_record(
            scope, draft, merged, merge_key=group.key, origin=origin, at=at, merge_identity=group.identity
        )
        group.row = tx.replace_properties(stored, record)
        audits.append(_record_audit(caller, "record.update", group.row, before=stored))
    rows = tx.insert_records([record for _, record in fresh])
    for group, record in fresh:
        if record.record_id not in rows:  # the tenant's writers are serialised: the key was free just now
            raise InternalError(f"record {record.record_id} collided with a concurrent write")
        group.row = rows[record.record_id]
        tally.created += 1
        audits.append(_record_audit(caller, "record.create", group.row))
    return audits


def _link_parents(
    tx: Transaction, caller: Caller, scope: ScopeColumns, groups: Sequence[_Group], at: str, tally: Tally
) -> list[AuditDraft]:
    links, ids = [], {}
    for group in groups:
        assert group.row is not None
        ids[group.row.rowid] = group.row.record_id
        for parent, relation in group.parents:
            ids[parent.rowid] = parent.record_id
            links.append((relation, NodeRef("RECORD", parent.rowid), NodeRef("RECORD", group.row.rowid)))
    created = tx.link_many(scope.scope_key, links, at) if links else []
    tally.relationships += len(created)
    return [
        caller.audit(
            "relationship.create",
            target_kind="RELATIONSHIP",
            scope_key=scope.scope_key,
            target_id=relationship_id(ids[e.source.rowid], e.type, ids[e.target.rowid]),
            after_digest=relationship_digest(
                scope.scope_key,
                e.type,
                ("RECORD", ids[e.source.rowid]),
                ("RECORD", ids[e.target.rowid]),
                e.properties_json,
            ),
        )
        for e in created
    ]


def _record_audit(caller: Caller, action: str, row: RecordRow, before: RecordRow | None = None) -> AuditDraft:
    return caller.audit(
        action,
        target_kind="RECORD",
        target_id=row.record_id,
        scope_key=row.scope_key,
        before_digest=record_digest(before) if before else None,
        after_digest=record_digest(row),
    )
