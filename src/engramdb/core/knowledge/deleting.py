"""Deleting records: one (with the records nested under it, if asked) or all a where matches.

``dryRun`` answers what would go and deletes nothing. A deleted record takes its values, its
vectors, its history and every relationship that touches it; each deletion is audited.
"""

from __future__ import annotations

from collections.abc import Sequence

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
        rows = [row, *(_descendants(tenant, scope_key, row) if query.cascade else [])]
        if len(rows) > MAX_DELETED:  # _descendants stops walking past the limit: the rest was never listed
            raise InvalidInputError(
                f"record {record_id} and the records nested under it are more than {MAX_DELETED}; delete its "
                "children by a where first (POST /v1/records/delete), or this record alone",
                field="cascade",
            )
        return self._delete(caller, tenant, scope_key, rows, dry_run=query.dry_run)

    def delete_records(self, caller: Caller, body: DeleteRequest) -> Deleted:
        auth.require(caller, "memory.write")
        tenant = self.shared.tenant(caller)
        scope_key = auth.scope_key(self.shared.scope(caller, _named(body.scope)))
        query = search_query(body.labels, body.where, {}, MAX_DELETED + 1, 0)
        rows = tenant.search_records(scope_key, query)
        if len(rows) > MAX_DELETED:
            raise InvalidInputError(f"the where matches more than {MAX_DELETED} records; narrow it", field="where")
        return self._delete(caller, tenant, scope_key, rows, dry_run=body.dry_run)

    def _delete(
        self, caller: Caller, tenant: TenantStore, scope_key: str, rows: Sequence[RecordRow], *, dry_run: bool
    ) -> Deleted:
        ids = [r.record_id for r in rows]
        if dry_run:
            touching = tenant.edges(scope_key, [NodeRef("RECORD", r.rowid) for r in rows])
            return Deleted(dry_run=True, records=ids, relationships=len(touching))
        with tenant.transaction() as tx:
            current = [r for r in rows if tx.locked_record(scope_key, r.record_id) is not None]
            _, edges = tx.delete_records(scope_key, [r.rowid for r in current])
            why = f"one delete of {len(current)} record(s) and their {edges} relationship(s)"
            tx.audit_many(
                [
                    caller.audit(
                        "record.delete",
                        target_kind="RECORD",
                        target_id=row.record_id,
                        scope_key=scope_key,
                        before_digest=record_digest(row),
                        reason=why,
                    )
                    for row in current
                ]
            )
        return Deleted(dry_run=False, records=[r.record_id for r in current], relationships=edges)


def _descendants(tenant: TenantStore, scope_key: str, root: RecordRow) -> list[RecordRow]:
    """The records nested under ``root`` (HAS_ relationships out of it), recursively; the walk stops
    once more than ``MAX_DELETED`` are found (the delete is then refused)."""
    found: dict[int, RecordRow] = {}
    frontier = [root.rowid]
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
            and e.target.rowid != root.rowid
        ]
        rows = tenant.record_rows(scope_key, children)
        found.update(rows)
        frontier = list(rows)
    return list(found.values())
