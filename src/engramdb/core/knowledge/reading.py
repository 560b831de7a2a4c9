"""Reading the knowledge plane: one record, its history and links, searches, the scope's schema."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from engramdb.contract.bounds import LONE_SURROGATE, has_lone_surrogate
from engramdb.contract.canonical import canonical_json
from engramdb.core import auth
from engramdb.core.assist.links import as_relationships
from engramdb.core.auth import Caller
from engramdb.core.knowledge.paging import ANSWER_BYTES, PageKey, fitting, rows_that_fit, version_cursor
from engramdb.core.knowledge.properties import check_label, check_property
from engramdb.core.knowledge.views import NOUNS, record_view, relationship_view
from engramdb.core.knowledge.where import PSEUDO, parse
from engramdb.core.shared import Area
from engramdb.errors import InvalidInputError, NotFoundError
from engramdb.models.knowledge import (
    AggregateRow,
    ExportRequest,
    GraphExport,
    HistoryQuery,
    KnowledgeSchema,
    RecordHistory,
    RecordQuery,
    RecordSearch,
    RecordSearchResult,
    RecordVersion,
    RecordView,
    RelationshipList,
    RelationshipQuery,
    SchemaEdge,
    SchemaLabel,
    SchemaProperty,
    SchemaQuery,
)
from engramdb.storage.knowledge.port import BUDGET, Aggregate, Edge, NodeRef, Order, Query, RecordRow
from engramdb.storage.port import TenantStore

# An export's relationships, all hops together (its records: limit + these). Its answer is built and encoded
# whole, holding the interpreter's lock: 10,000 records and relationships made 12 MB and held it 100-550 ms at
# a time, and concurrent exports took the server's memory to 2.9 GB (session 46).
EXPORT_RELATIONSHIPS = 2_000


class KnowledgeReading(Area):
    """Records and relationships: read, search, summarise, export."""

    def get_record(self, caller: Caller, record_id: str, query: RecordQuery) -> RecordView:
        tenant, scope_key = self._scoped(caller, query.named_scope_fields())
        return record_view(_record(tenant, scope_key, record_id))

    def record_history(self, caller: Caller, record_id: str, query: HistoryQuery) -> RecordHistory:
        """A page of the record's versions, oldest first (the last page ends with the current one)."""
        tenant, scope_key = self._scoped(caller, query.named_scope_fields())
        row = _record(tenant, scope_key, record_id)
        after = version_cursor(query.cursor)
        sizes = tenant.history_sizes(row.rowid, after=after, limit=query.limit + 1)
        if len(sizes) < query.limit + 1 and row.version > after:  # the current version ends the last page
            sizes.append((row.version, len(row.properties_json.encode())))
        kept, cut = fitting(sizes[: query.limit])
        earlier = tenant.record_history(row.rowid, after=after, limit=sum(v < row.version for v in kept))
        page = [
            RecordVersion(version=h.version, properties=json.loads(h.properties_json), until=h.replaced_at)
            for h in earlier
        ]
        if row.version in kept:
            page.append(RecordVersion(version=row.version, properties=json.loads(row.properties_json)))
        more = cut or len(sizes) > query.limit
        return RecordHistory(versions=page, next_cursor=str(page[-1].version) if more else None)

    def list_relationships(self, caller: Caller, query: RelationshipQuery) -> RelationshipList:
        """A page of a node's relationships (a record's, an episode's or a fact's), oldest first."""
        tenant, scope_key = self._scoped(caller, query.named_scope_fields())
        if query.type is not None:
            check_label(query.type, "type")
        after = PageKey.decode(query.cursor, self.shared.sealer(caller)) if query.cursor is not None else None
        rowid = tenant.node_rowid(scope_key, query.kind, query.id)
        if rowid is None:
            raise NotFoundError(f"no {NOUNS[query.kind]} {query.id} in this scope", id=query.id)
        edges = tenant.node_edges(
            scope_key,
            NodeRef(query.kind, rowid),
            type=query.type,
            direction=query.direction,
            after=after.edge_key() if after else None,
            limit=query.limit + 1,
        )
        more, edges = len(edges) > query.limit, edges[: query.limit]
        # Past the last edge read, edges not read yet may come before a model's link: the page ends there.
        bound = PageKey.of_edge(edges[-1]) if more else None
        found = [(PageKey.of_edge(e), view) for e, view in _resolved(tenant, edges)]
        if query.kind != "RECORD":  # and the links a model's work made (verdicts, evidence, merges)
            for link in tenant.links_of(scope_key, query.id):
                key = PageKey(link.created_at, 1, link.link_id)
                if (after is None or key > after) and (bound is None or key < bound):
                    views = as_relationships([link], query.id, type=query.type, direction=query.direction)
                    found += [(key, view) for view in views]
            found.sort(key=lambda kv: kv[0])
        page = found[: query.limit]
        kept, cut = fitting([(i, _size(view.properties)) for i, (_, view) in enumerate(page)])
        page = page[: len(kept)]
        # The next page starts after the last one listed, or, when all that was found fit, after the
        # last edge read (one whose end is gone since is not listed, and not read again).
        last = page[-1][0] if cut or len(found) > query.limit else bound or (page[-1][0] if page else None)
        more = more or cut or len(found) > query.limit
        return RelationshipList(
            relationships=[view for _, view in page],
            next_cursor=last.encode(self.shared.sealer(caller)) if more and last else None,
        )

    def records_schema(self, caller: Caller, query: SchemaQuery) -> KnowledgeSchema:
        """The scope's labels, their properties and kinds, and the relationships between labels."""
        tenant, scope_key = self._scoped(caller, query.named_scope_fields())
        if query.label is not None:
            check_label(query.label, "label")
        edges: dict[str, list[SchemaEdge]] = {}
        for source, kind, target, count in tenant.edge_summary(scope_key):
            edges.setdefault(source, []).append(SchemaEdge(type=kind, target=target, count=count))
        labels = [
            SchemaLabel(
                label=label,
                records=count,
                relationships=edges.get(label, []),
                properties=[SchemaProperty(name=n, kind=k, records=c) for n, k, c in props],
            )
            for label, count, props in tenant.schema_summary(scope_key)
            if query.label in (None, label)
        ]
        return KnowledgeSchema(labels=labels)

    def search_records(self, caller: Caller, body: RecordSearch) -> RecordSearchResult:
        """Records matching a where (ordered and paged), their aggregates, or a semantic search."""
        tenant, scope_key = self._scoped(caller, body.scope.named_scope_fields() if body.scope else {})
        query = search_query(body.labels, body.where, body.order_by, body.limit, body.skip)
        specs = _aggregate_specs(body)  # the whole search is checked before its first statement
        if body.property is not None:
            check_property(body.property, "property")
        total = tenant.count_records(scope_key, query) if body.count else None
        if specs is not None:
            aggregates, more = _aggregates(tenant, scope_key, query, specs, body.group_by)
            return RecordSearchResult(records=[], total=total, aggregates=aggregates, more_groups=more)
        if body.query is None:
            page, cut = rows_that_fit(tenant, scope_key, tenant.search_record_sizes(scope_key, query))
            records = [record_view(row) for row in page]
            return RecordSearchResult(records=records, total=_total(total, len(page), body, cut), truncated=cut)
        embedder = self.shared.embedder
        vector = embedder.embed([body.query])[0]
        # Only this embedder's vectors compare with the query's: another model's wait for `engram reembed`.
        ranked = tenant.record_vector_candidates(
            scope_key, vector, query, body.property, body.limit + body.skip, embedder.model_id
        )
        scores = dict(ranked[body.skip :])
        sizes = tenant.record_sizes(scope_key, list(scores))
        page, cut = rows_that_fit(tenant, scope_key, [(rowid, sizes[rowid]) for rowid in scores if rowid in sizes])
        found = [record_view(row, round(scores[row.rowid], 6)) for row in page]
        return RecordSearchResult(records=found, total=_total(total, len(found), body, cut), truncated=cut)

    def export_records(self, caller: Caller, body: ExportRequest) -> GraphExport:
        """The matching records and what they link to, ``depth`` hops out, with the relationships."""
        tenant, scope_key = self._scoped(caller, body.scope.named_scope_fields() if body.scope else {})
        query = search_query(body.labels, body.where, {}, body.limit, 0)
        sizes = tenant.search_record_sizes(scope_key, query)
        matched, truncated = rows_that_fit(tenant, scope_key, sizes)
        rows = {row.rowid: row for row in matched}
        left = ANSWER_BYTES - sum(size for rowid, size in sizes if rowid in rows)
        frontier, edges = [NodeRef("RECORD", rowid) for rowid in rows], dict[int, Edge]()
        seen = set(frontier)
        for _ in range(body.depth):
            if not frontier or truncated:
                break
            room = EXPORT_RELATIONSHIPS - len(edges)
            # A hop reads only what the budget has room for (and the edges it holds already, which it
            # meets again from their far ends), however many relationships a hub has.
            found = tenant.edges(scope_key, frontier, limit=room + 1 + len(edges))
            found = [e for e in found if e.rowid not in edges]
            truncated = len(found) > room
            reached = list(dict.fromkeys(n for e in found[:room] for n in (e.source, e.target) if n not in seen))
            wanted = [n.rowid for n in reached if n.kind == "RECORD"]
            need = sum(tenant.record_sizes(scope_key, wanted).values()) + sum(_bytes(e) for e in found[:room])
            if need and need > left:  # the hop's relationships and the records they name have no room
                truncated = True
                break
            left -= need
            edges.update({e.rowid: e for e in found[:room]})
            frontier = reached
            seen.update(frontier)
            rows.update(tenant.record_rows(scope_key, wanted))
        return GraphExport(
            records=[record_view(r) for r in rows.values()],
            relationships=_relationships(tenant, list(edges.values())),
            truncated=truncated,
        )

    def _scoped(self, caller: Caller, named: dict[str, Any]) -> tuple[TenantStore, str]:
        auth.require(caller, "memory.read")
        return self.shared.tenant(caller), auth.scope_key(self.shared.scope(caller, named))


def search_query(
    labels: Sequence[str], where: Mapping[str, Any], order_by: Mapping[str, str], limit: int, skip: int
) -> Query:
    """A validated query: labels UPPER_CASE, the where parsed, the order on properties or $ fields."""
    for i, label in enumerate(labels):
        check_label(label, f"labels[{i}]")
    order: list[Order] = []
    for name, way in order_by.items():
        if len(order) == BUDGET.order:
            raise InvalidInputError(
                f"orderBy.{name}: a search orders by at most {BUDGET.order:,} keys", field=f"orderBy.{name}"
            )
        if name not in PSEUDO:
            check_property(name, f"orderBy.{name}")
        order.append(Order(name, way == "desc"))
    return Query(labels=tuple(labels), where=parse(where), order=tuple(order), limit=limit, skip=skip)


def _aggregate_specs(body: RecordSearch) -> list[Aggregate] | None:
    """The aggregates asked for (None: records are), each checked, at most ``BUDGET.aggregates``."""
    if body.aggregate is None:
        return None
    specs: list[Aggregate] = []
    for alias, spec in body.aggregate.items():
        if has_lone_surrogate(alias):  # an alias is answered back: it must be text
            raise InvalidInputError(f"aggregate: an alias {LONE_SURROGATE}", field="aggregate")
        if len(specs) == BUDGET.aggregates:
            raise InvalidInputError(
                f"aggregate.{alias}: a search asks for at most {BUDGET.aggregates:,} aggregates",
                field=f"aggregate.{alias}",
            )
        if spec.fn != "count" and spec.field is None:
            raise InvalidInputError(f"aggregate.{alias}: {spec.fn} needs a field", field=f"aggregate.{alias}.field")
        if spec.field is not None:
            check_property(spec.field, f"aggregate.{alias}.field")
        specs.append(Aggregate(alias, spec.fn, spec.field))
    for name in body.group_by:
        check_property(name, "groupBy")
    return specs


def _aggregates(
    tenant: TenantStore, scope_key: str, query: Query, specs: list[Aggregate], group_by: list[str]
) -> tuple[list[AggregateRow], bool | None]:
    """The page's aggregate rows, and with groups whether more follow (one group more is asked for)."""
    asked = replace(query, limit=query.limit + 1) if group_by else query
    rows = tenant.aggregate_records(scope_key, asked, group_by, specs)
    aggregates = [
        AggregateRow(
            group=dict(zip(group_by, keys, strict=True)),
            values={a.alias: _number(v) for a, v in zip(specs, values, strict=True)},
        )
        for keys, values in rows[: query.limit]
    ]
    return aggregates, (len(rows) > query.limit if group_by else None)


def _total(counted: int | None, found: int, body: RecordSearch, cut: bool) -> int | None:
    """The count when asked; else known only when this page holds the last match."""
    if counted is not None:
        return counted
    return body.skip + found if not cut and found < body.limit and (found or not body.skip) else None


def _record(tenant: TenantStore, scope_key: str, record_id: str) -> RecordRow:
    row = tenant.get_record(scope_key, record_id)
    if row is None:
        raise NotFoundError(f"no record {record_id} in this scope", id=record_id)
    return row


def _bytes(edge: Edge) -> int:
    return len(edge.properties_json.encode())


def _size(properties: Mapping[str, Any]) -> int:
    """The UTF-8 bytes of properties in the JSON they are stored as."""
    return len(canonical_json(dict(properties)).encode())


def _relationships(tenant: TenantStore, edges: Sequence[Edge]) -> list[Any]:
    return [view for _, view in _resolved(tenant, edges)]


def _resolved(tenant: TenantStore, edges: Sequence[Edge]) -> list[tuple[Edge, Any]]:
    """Each edge whose ends are still there, with its view (their public ids looked up at once)."""
    ids = tenant.node_ids([n for e in edges for n in (e.source, e.target)])
    return [(e, relationship_view(e, ids)) for e in edges if e.source in ids and e.target in ids]


def _number(value: Any) -> float | int | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else round(float(value), 6)
