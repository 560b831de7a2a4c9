"""The knowledge plane's reads and its embedding bookkeeping: one implementation for both backends."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engramdb.storage.columns import filter_clause
from engramdb.storage.knowledge.port import Aggregate, Edge, EdgeKey, HistoryRow, NodeRef, Query, RecordRow, Value
from engramdb.storage.knowledge.rows import EDGE_COLUMNS, Run, chunks, edge, in_clause, record_row
from engramdb.storage.knowledge.sql import RECORD_COLUMNS, Compiled, Dialect, WhereCompiler, bounded, drivers, order_by
from engramdb.storage.rows import CandidateFilter

RARE = 2_000  # an equality this rare finds a page faster than walking the label newest first
CHUNK = 5_000  # ids bound in one statement (SQLite takes at most 32,766 values)
COMMON = 100_000  # how far the sizes of equalities are counted when choosing where to start


class GraphReads:
    """The knowledge plane's reads."""

    def __init__(self, run: Run, dialect: Dialect) -> None:
        self._run = run
        self._d = dialect

    def get_record(self, scope_key: str, record_id: str) -> RecordRow | None:
        owned, params = self._d.owned("r")
        m = self._d.mark
        rows = self._run(
            f"SELECT {RECORD_COLUMNS} FROM records r WHERE {owned}r.scope_key = {m} AND r.record_id = {m}",
            [*params, scope_key, record_id],
        )
        return record_row(rows[0]) if rows else None

    def record_rows(self, scope_key: str, rowids: Sequence[int]) -> dict[int, RecordRow]:
        return {r[0]: record_row(r) for r in self._by_rowid(RECORD_COLUMNS, scope_key, rowids)}

    def record_sizes(self, scope_key: str, rowids: Sequence[int]) -> dict[int, int]:
        rows = self._by_rowid(f"rowid, {self._d.bytes_of('properties_json')}", scope_key, rowids)
        return {int(r[0]): int(r[1]) for r in rows}

    def record_keys(self, scope_key: str, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
        return {
            int(r[0]): (str(r[1]), str(r[2])) for r in self._by_rowid("rowid, record_id, created_at", scope_key, rowids)
        }

    def _by_rowid(self, columns: str, scope_key: str, rowids: Sequence[int]) -> list[Any]:
        """``columns`` of the scope's records among ``rowids``."""
        owned, params = self._d.owned("r")
        out: list[Any] = []
        for chunk in chunks(list(dict.fromkeys(rowids)), CHUNK):  # under SQLite's limit of bound values
            clause = in_clause("r.rowid", chunk, self._d)
            out += self._run(
                f"SELECT {columns} FROM records r WHERE {owned}r.scope_key = {self._d.mark} AND {clause.sql}",
                [*params, scope_key, *clause.params],
            )
        return out

    def _roots(self, scope_key: str, query: Query, *, whole: bool) -> Compiled:
        """The compiled roots, found from the equality with the fewest records where that helps.

        SQLite has no per-value statistics, so it is told: a page in record-time order walks the
        label newest first and stops early unless an equality is rare (at most ``RARE`` records);
        a whole evaluation (count, aggregates, an order by property) starts from the rarest
        equality. PostgreSQL's planner has the statistics and decides alone.
        """
        compiler = WhereCompiler(self._d, scope_key, whole=whole)
        plain = compiler.roots(query)
        bounded([*plain.prefix_params, *plain.params])  # before the first statement, the samples' too
        found = drivers(query.where)
        if not self._d.rowid_only or not found:
            return plain
        cap = COMMON if whole else RARE
        sizes = []
        for node in found:
            sample = compiler.value_set(node, query.labels, limit=cap + 1)
            sizes.append(int(self._run(f"SELECT count(*) FROM ({sample.sql}) s", bounded(sample.params))[0][0]))
        size, best = min(zip(sizes, range(len(found)), strict=True))
        by_time = all(o.name == "$createdAt" for o in query.order)
        chosen = found[best] if whole or not by_time or size <= RARE else None
        return WhereCompiler(self._d, scope_key, whole=whole).roots(query, driver=chosen)

    def search_record_sizes(self, scope_key: str, query: Query) -> list[tuple[int, int]]:
        roots = self._roots(scope_key, query, whole=False)
        order = order_by(query, self._d)
        m = self._d.mark
        rows = self._run(
            f"{roots.prefix}SELECT r.rowid, {self._d.bytes_of('r.properties_json')} {roots.sql}{order.sql} "
            f"LIMIT {m} OFFSET {m}",
            bounded([*roots.prefix_params, *roots.params, *order.params, query.limit, query.skip]),
        )
        return [(int(r[0]), int(r[1])) for r in rows]

    def count_records(self, scope_key: str, query: Query) -> int:
        roots = self._roots(scope_key, query, whole=True)
        params = bounded([*roots.prefix_params, *roots.params])
        return int(self._run(f"{roots.prefix}SELECT count(*) {roots.sql}", params)[0][0])

    def aggregate_records(
        self, scope_key: str, query: Query, group_by: Sequence[str], aggregates: Sequence[Aggregate]
    ) -> list[tuple[tuple[object, ...], tuple[float | None, ...]]]:
        """The aggregates over the whole match, per group; the groups paged by the query's limit and skip."""
        roots = self._roots(scope_key, query, whole=True)
        m = self._d.mark
        selects, joins, join_params = [], [], []
        for i, name in enumerate(group_by):  # one row per value of each grouping property
            joins.append(f"LEFT JOIN record_values g{i} ON g{i}.record = r.rowid AND g{i}.name = {m}")
            join_params.append(name)
            selects.append(f"g{i}.kind, g{i}.text_value, g{i}.number_value")
        folds, fold_params = [], []
        for agg in aggregates:
            if agg.fn == "count":
                folds.append("count(DISTINCT r.rowid)")
                continue
            folds.append(
                f"{agg.fn}((SELECT min(a.number_value) FROM record_values a WHERE a.record = r.rowid "
                f"AND a.name = {m} AND a.kind = 'number'))"
            )
            fold_params.append(agg.name or "")
        folds = folds or ["count(DISTINCT r.rowid)"]
        groups = ", ".join(selects)
        # A group without the property (all NULL) last on both backends (SQLite sorts NULL first).
        order = ", ".join(f"g{i}.kind IS NULL, {select}" for i, select in enumerate(selects))
        sql = (
            f"{roots.prefix}SELECT {groups + ', ' if groups else ''}{', '.join(folds)} FROM records r "
            f"{' '.join(joins)} WHERE r.rowid IN (SELECT r.rowid {roots.sql})"
            + (f" GROUP BY {groups} ORDER BY {order} LIMIT {m} OFFSET {m}" if groups else "")
        )
        page = [query.limit, query.skip] if groups else []
        out = []
        # Placeholders in statement order: the related sets, the folds, the joins, the where, the page.
        params = [*roots.prefix_params, *fold_params, *join_params, *roots.params, *page]
        for row in self._run(sql, bounded(params)):
            keys = tuple(_group_value(row[3 * i : 3 * i + 3]) for i in range(len(group_by)))
            out.append((keys, tuple(row[3 * len(group_by) :])))
        return out

    def record_values(self, rowids: Sequence[int]) -> dict[int, list[Value]]:
        out: dict[int, list[Value]] = {}
        if not rowids:
            return out
        owned, params = self._d.owned("v")
        clause = in_clause("v.record", rowids, self._d)
        for record, name, kind, text, number in self._run(
            f"SELECT v.record, v.name, v.kind, v.text_value, v.number_value FROM record_values v "
            f"WHERE {owned}{clause.sql}",
            params + clause.params,
        ):
            out.setdefault(record, []).append(Value(name, kind, text, number))
        return out

    def edges(
        self, scope_key: str, nodes: Sequence[NodeRef], types: Sequence[str] = (), limit: int | None = None
    ) -> list[Edge]:
        """The relationships touching ``nodes``, oldest first (the first ``limit`` of them): one IN
        list per kind of node and chunk (an OR per node grew past SQLite's expression depth at ~500
        nodes), and a statement per end, each on its index (one OR of both ends, first by rowid, read
        every relationship of the scope: 177 ms at 500,000 for a node of three)."""
        m = self._d.mark
        owned, params = self._d.owned("relationships")
        typed = f" AND type IN ({self._d.marks(len(types))})" if types else ""
        first = f" LIMIT {int(limit)}" if limit is not None else ""
        by_kind: dict[str, list[int]] = {}
        for node in nodes:
            by_kind.setdefault(node.kind, []).append(node.rowid)
        found: dict[int, Edge] = {}
        for kind, rowids in by_kind.items():
            for chunk in chunks(list(dict.fromkeys(rowids)), CHUNK):
                marks = self._d.marks(len(chunk))
                source, target = (
                    f"SELECT rowid FROM relationships WHERE {owned}scope_key = {m} AND {end}_kind = {m} "
                    f"AND {end} IN ({marks}){typed}"
                    for end in ("source", "target")
                )
                ids = f"SELECT rowid FROM ({source} UNION {target}) ends ORDER BY rowid{first}"
                end_params = [*params, scope_key, kind, *chunk, *types]
                rows = self._run(
                    f"SELECT {EDGE_COLUMNS} FROM relationships WHERE {owned}rowid IN ({ids})",
                    [*params, *end_params, *end_params],
                )
                found.update((e.rowid, e) for e in map(edge, rows))
        return [found[rowid] for rowid in sorted(found)[:limit]]

    def node_edges(
        self, scope_key: str, node: NodeRef, *, type: str | None, direction: str, after: EdgeKey | None, limit: int
    ) -> list[Edge]:
        """A page of one node's relationships in (createdAt, rowid) order, those after ``after``: a
        statement per end, each on its index (one OR of both ends read the whole scope). Each still
        sorts all of the node's relationships at that end: ~15 ms for 20,000 (docs/knowledge.md)."""
        m = self._d.mark
        owned, params = self._d.owned("relationships")
        found: dict[int, Edge] = {}
        for end in ("source", "target"):
            if direction == ("in" if end == "source" else "out"):
                continue
            at_end = f"{end}_kind = {m} AND {end} = {m}"
            sql = f"SELECT {EDGE_COLUMNS} FROM relationships WHERE {owned}scope_key = {m} AND {at_end}"
            args: list[Any] = [*params, scope_key, node.kind, node.rowid]
            if type is not None:
                sql += f" AND type = {m}"
                args.append(type)
            if direction == "in":  # a loop on the node goes out of it (as a model's link on one does)
                sql += f" AND NOT (source_kind = {m} AND source = {m})"
                args += [node.kind, node.rowid]
            if after is not None:
                sql += f" AND (created_at > {m} OR (created_at = {m} AND rowid > {m}))"
                args += [after.created_at, after.created_at, after.rowid]
            rows = self._run(f"{sql} ORDER BY created_at, rowid LIMIT {m}", [*args, limit])
            found.update((e.rowid, e) for e in map(edge, rows))  # a loop on the node is one relationship
        return sorted(found.values(), key=lambda e: (e.created_at, e.rowid))[:limit]

    def admitted(self, scope_key: str, rowids: Sequence[int], filt: CandidateFilter) -> list[int]:
        if not rowids:
            return []
        owned, params = self._d.owned("m")
        clause = in_clause("m.rowid", rowids, self._d)
        lifecycle, lifecycle_params = filter_clause(filt, "m", self._d.mark)
        sql = f"SELECT m.rowid FROM memories m WHERE {owned}m.scope_key = {self._d.mark} AND {clause.sql}{lifecycle}"
        rows = self._run(sql, [*params, scope_key, *clause.params, *lifecycle_params])
        return [int(r[0]) for r in rows]

    def record_history(self, rowid: int, *, after: int, limit: int) -> list[HistoryRow]:
        return [HistoryRow(*r) for r in self._versions("properties_json, replaced_at", rowid, after, limit)]

    def history_sizes(self, rowid: int, *, after: int, limit: int) -> list[tuple[int, int]]:
        rows = self._versions(self._d.bytes_of("properties_json"), rowid, after, limit)
        return [(int(r[0]), int(r[1])) for r in rows]

    def _versions(self, columns: str, rowid: int, after: int, limit: int) -> list[Any]:
        """The version and ``columns`` of a record's earlier versions after ``after``, oldest first."""
        owned, params = self._d.owned("record_history")
        m = self._d.mark
        return self._run(
            f"SELECT version, {columns} FROM record_history WHERE {owned}"
            f"record = {m} AND version > {m} ORDER BY version LIMIT {m}",
            [*params, rowid, after, limit],
        )

    def node_rowid(self, scope_key: str, kind: str, node_id: str) -> int | None:
        if "\x00" in node_id:  # names nothing stored (and PostgreSQL's text cannot carry it)
            return None
        m = self._d.mark
        if kind == "RECORD":
            found = self.get_record(scope_key, node_id)
            return found.rowid if found else None
        owned, params = self._d.owned("memories")
        rows = self._run(
            f"SELECT rowid FROM memories WHERE {owned}scope_key = {m} AND source = {m} AND memory_id = {m}",
            [*params, scope_key, kind, node_id],
        )
        return int(rows[0][0]) if rows else None

    def node_ids(self, nodes: Sequence[NodeRef]) -> dict[NodeRef, str]:
        out: dict[NodeRef, str] = {}
        for kind, table, column in (("RECORD", "records", "record_id"), ("MEMORY", "memories", "memory_id")):
            wanted = [n.rowid for n in nodes if (n.kind == "RECORD") == (kind == "RECORD")]
            if not wanted:
                continue
            owned, params = self._d.owned(table)
            extra = ", source" if table == "memories" else ", 'RECORD'"
            for chunk in chunks(list(dict.fromkeys(wanted)), CHUNK):
                clause = in_clause("rowid", chunk, self._d)
                for rowid, public, source in self._run(
                    f"SELECT rowid, {column}{extra} FROM {table} WHERE {owned}{clause.sql}", params + clause.params
                ):
                    out[NodeRef(source, rowid)] = public
        return out

    def schema_summary(self, scope_key: str) -> list[tuple[str, int, list[tuple[str, str, int]]]]:
        m = self._d.mark
        owned, params = self._d.owned("r")
        counts = self._run(
            f"SELECT r.label, count(*) FROM records r WHERE {owned}r.scope_key = {m} GROUP BY r.label ORDER BY r.label",
            [*params, scope_key],
        )
        props: dict[str, list[tuple[str, str, int]]] = {}
        # Values carry their record's scope and label: read from their catalogue index alone, in its
        # order (a join to the records and a sort for the distinct count took 1.8 s at 850,000 values).
        owned, params = self._d.owned("v")
        for label, name, kind, count in self._run(
            f"SELECT v.label, v.name, v.kind, count(DISTINCT v.record) FROM record_values v "
            f"WHERE {owned}v.scope_key = {m} GROUP BY v.label, v.name, v.kind ORDER BY v.label, v.name, v.kind",
            [*params, scope_key],
        ):
            props.setdefault(label, []).append((name, kind, int(count)))
        return [(label, int(count), props.get(label, [])) for label, count in counts]

    def edge_summary(self, scope_key: str) -> list[tuple[str, str, str, int]]:
        owned, params = self._d.owned("e")
        rows = self._run(
            f"SELECT s.label, e.type, t.label, count(*) FROM relationships e JOIN records s ON s.rowid = e.source "
            f"JOIN records t ON t.rowid = e.target WHERE {owned}e.scope_key = {self._d.mark} "
            "AND e.source_kind = 'RECORD' AND e.target_kind = 'RECORD' GROUP BY s.label, e.type, t.label "
            "ORDER BY s.label, e.type, t.label",
            [*params, scope_key],
        )
        return [(a, b, c, int(n)) for a, b, c, n in rows]


class GraphEmbeddings:
    """The vectors of record texts: what is due, and storing the outcome (on a writing connection)."""

    def __init__(self, run: Run, dialect: Dialect, encode: Callable[[Any], Any]) -> None:
        self._run = run
        self._d = dialect
        self._encode = encode  # a vector as the driver stores it

    def jobs(self, limit: int, now: str) -> list[tuple[int, str, int]]:
        m = self._d.mark
        owned, params = self._d.owned("record_vectors")
        # The due rows come from the due index (its condition named), not a read of every row.
        due = f"(embed_state = 'pending' OR (embed_state = 'failed' AND embed_next_at <= {m}))"
        rows = self._run(
            f"SELECT rowid, text, embed_attempts FROM record_vectors WHERE {owned}rowid IN (SELECT rowid "
            f"FROM record_vectors WHERE {owned}embed_state != 'ready' AND {due}) ORDER BY rowid LIMIT {m}",
            [*params, *params, now, limit],
        )
        return [(int(a), str(b), int(c)) for a, b, c in rows]

    def save(self, ids: Sequence[int], texts: Sequence[str], vectors: Any, model: str) -> None:
        """Store each vector if its row still holds the text embedded: a record changed meanwhile
        has its new text pending in the same row, which must not be marked ready with the old vector."""
        m = self._d.mark
        owned, params = self._d.owned("record_vectors")
        for rowid, text, vector in zip(ids, texts, vectors, strict=True):
            self._run(
                f"UPDATE record_vectors SET embedding = {m}, embed_state = 'ready', embed_model = {m}, "
                f"embed_error = NULL WHERE {owned}rowid = {m} AND text = {m}",
                [self._encode(vector), model, *params, rowid, text],
            )

    def failed(self, ids: Sequence[int], error: str, next_at: Sequence[str]) -> None:
        m = self._d.mark
        owned, params = self._d.owned("record_vectors")
        for rowid, when in zip(ids, next_at, strict=True):
            self._run(
                f"UPDATE record_vectors SET embed_state = 'failed', embed_error = {m}, embed_next_at = {m}, "
                f"embed_attempts = embed_attempts + 1 WHERE {owned}rowid = {m}",
                [error, when, *params, rowid],
            )


def _group_value(cells: Sequence[Any]) -> object:
    kind, text, number = cells
    if kind is None:
        return None
    if kind == "boolean":
        return bool(number)
    if kind == "number":
        return int(number) if float(number).is_integer() else float(number)
    return text
