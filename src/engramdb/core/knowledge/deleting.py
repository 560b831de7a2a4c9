"""Deleting records: one (with the records nested under it, if asked) or all a where matches.

``dryRun`` answers what would go and deletes nothing. A deleted record takes its values, its
vectors, its history and every relationship that touches it; each deletion is audited.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engramdb.audit_chain.states import record_digest
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.knowledge.reading import search_query
from engramdb.core.knowledge.writing import _named
from engramdb.core.shared import Area
from engramdb.errors import InvalidInputError, NotFoundError
from engramdb.models.knowledge import Deleted, DeleteQuery, DeleteRequest
from engramdb.storage.knowledge.port import NodeRef, RecordRow
from engramdb.storage.port import TenantStore

MAX_DELETED = 10_000  # records one delete may take (a larger one is refused, not cut short)


class KnowledgeDeleting(Area):
    """Deleting records, previewed first if the caller wants."""

    def delete_record(self, caller: Caller, record_id: str, query: DeleteQuery) -> Deleted:
        auth.require(caller, "memory.write")
        tenant = self.shared.tenant(caller)
        scope_key = auth.scope_key(self.shared.scope(caller, query.named_scope_fields()))
        row = tenant.get_record(scope_key, record_id)
        if row is None:
            raise NotFoundError(f"no record {record_id} in this scope", id=record_id)
        rowids = [row.rowid, *(_descendants(tenant, scope_key, row.rowid) if query.cascade else [])]
        if len(rowids) > MAX_DELETED:  # _descendants stops walking past the limit: the rest was never listed
            raise InvalidInputError(
                f"record {record_id} and the records nested under it are more than {MAX_DELETED}; delete its "
                "children by a where first (POST /v1/records/delete), or this record alone",
                field="cascade",
            )
        return self._delete(caller, tenant, scope_key, rowids, dry_run=query.dry_run)

    def delete_records(self, caller: Caller, body: DeleteRequest) -> Deleted:
        auth.require(caller, "memory.write")
        tenant = self.shared.tenant(caller)
        scope_key = auth.scope_key(self.shared.scope(caller, _named(body.scope)))
        query = search_query(body.labels, body.where, {}, MAX_DELETED + 1, 0)
        rowids = [rowid for rowid, _ in tenant.search_record_sizes(scope_key, query)]
        if len(rowids) > MAX_DELETED:
            raise InvalidInputError(f"the where matches more than {MAX_DELETED} records; narrow it", field="where")
        return self._delete(caller, tenant, scope_key, rowids, dry_run=body.dry_run)

    def _delete(
        self, caller: Caller, tenant: TenantStore, scope_key: str, rowids: Sequence[int], *, dry_run: bool
    ) -> Deleted:
        # By id, never the whole matches' properties at once: 10,000 records of 1 MB were 10 GB (a review).
        ids = {rowid: record_id for rowid, (record_id, _) in tenant.record_keys(scope_key, rowids).items()}
        if dry_run:
            touching = tenant.edges(scope_key, [NodeRef("RECORD", rowid) for rowid in ids])
            return Deleted(dry_run=True, records=[ids[r] for r in rowids if r in ids], relationships=len(touching))
        with tenant.transaction() as tx:
            current = [row for r in rowids if r in ids and (row := _stub(tx.locked_record(scope_key, ids[r])))]
            _, edges = tx.delete_records(scope_key, [r.rowid for r in current])
            why = f"one delete of {len(current)} record(s) and their {edges} relationship(s)"
            tx.audit_many(
                [
                    caller.audit(
                        "record.delete",
                        target_kind="RECORD",
                        target_id=row.record_id,
                        scope_key=scope_key,
                        before_digest=row.digest,
                        reason=why,
                    )
                    for row in current
                ]
            )
        return Deleted(dry_run=False, records=[r.record_id for r in current], relationships=edges)


@dataclass(frozen=True)
class _Stub:
    """What a deletion keeps of a record: its row, id and the audit digest of its state."""

    rowid: int
    record_id: str
    digest: str


def _stub(row: RecordRow | None) -> _Stub | None:
    return None if row is None else _Stub(row.rowid, row.record_id, record_digest(row))


def _descendants(tenant: TenantStore, scope_key: str, root: int) -> list[int]:
    """The records nested under ``root`` (HAS_ relationships out of it), recursively; the walk stops
    once more than ``MAX_DELETED`` are found (the delete is then refused)."""
    found: dict[int, tuple[str, str]] = {}  # in the order found
    frontier = [root]
    while frontier and len(found) <= MAX_DELETED:
        edges = tenant.edges(scope_key, [NodeRef("RECORD", r) for r in frontier])
        children = [
            e.target.rowid
            for e in edges
            if e.type.startswith("HAS_")
            and e.source.rowid in frontier
            and e.source.kind == "RECORD"
            and e.target.kind == "RECORD"
            and e.target.rowid not in found
            and e.target.rowid != root
        ]
        rows = tenant.record_keys(scope_key, children)
        found.update(rows)
        frontier = list(rows)
    return list(found)
