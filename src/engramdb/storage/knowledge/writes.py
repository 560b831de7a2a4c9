"""The knowledge plane's writes, inside a store transaction: one implementation for both backends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engramdb.storage.knowledge.port import Edge, NewRecord, NodeRef, RecordRow
from engramdb.storage.knowledge.rows import EDGE_COLUMNS, Run, RunMany, chunks, edge, in_clause, record_row
from engramdb.storage.knowledge.sql import RECORD_COLUMNS, Dialect
from engramdb.storage.rows import MemoryRecord


class GraphWrites:
    """The knowledge plane's writes, inside a store transaction."""

    def __init__(self, run: Run, dialect: Dialect, run_many: RunMany, run_planned: Run | None = None) -> None:
        self._run = run
        self._run_many = run_many
        # Statements whose best plan depends on their values, planned for them on each run (a backend
        # that keeps plans of prepared statements passes one that does not prepare).
        self._run_planned = run_planned or run
        self._d = dialect

    def _tenant_columns(self) -> tuple[str, list[Any]]:
        return ("tenant, ", [self._d.tenant]) if self._d.tenant is not None else ("", [])

    def insert_records(self, records: Sequence[NewRecord]) -> dict[str, RecordRow]:
        """Insert records, their typed values and their texts to embed, a few statements per chunk;
        the rows by record id (one whose label and merge key exist is left out: the constraint held)."""
        tenant, tenant_params = self._tenant_columns()
        width = len(tenant_params) + 15
        out: dict[str, RecordRow] = {}
        for chunk in chunks(records, 300):
            params = [
                x
                for r in chunk
                for x in (
                    *tenant_params,
                    r.record_id,
                    r.scope.scope_key,
                    r.scope.agent_id,
                    r.scope.profile_id,
                    r.scope.privacy_scope,
                    r.scope.participant_scope_hash,
                    r.scope.sandbox_eligible,
                    r.label,
                    r.properties_json,
                    r.merge_key,
                    r.merge_identity,
                    r.origin,
                    1,
                    r.at,
                    r.at,
                )
            ]
            rows = self._run(
                f"INSERT INTO records ({tenant}record_id, scope_key, agent_id, profile_id, privacy_scope, "
                "participant_scope_hash, sandbox_eligible, label, properties_json, merge_key, merge_identity, origin, "
                f"version, created_at, updated_at) VALUES {', '.join(f'({self._d.marks(width)})' for _ in chunk)} "
                f"ON CONFLICT DO NOTHING RETURNING {RECORD_COLUMNS}",
                params,
            )
            out.update((row.record_id, row) for row in map(record_row, rows))
        written = [(out[r.record_id].rowid, r) for r in records if r.record_id in out]
        self._write_values(written)
        self._write_texts(written, replacing=False)
        return out

    def merged_many(self, scope_key: str, label: str, merge_keys: Sequence[str]) -> dict[str, RecordRow]:
        """The records of ``label`` with these merge keys, by merge key."""
        owned, params = self._d.owned("r")
        m = self._d.mark
        out: dict[str, RecordRow] = {}
        for chunk in chunks(list(dict.fromkeys(merge_keys)), 500):
            rows = self._run(
                f"SELECT {RECORD_COLUMNS}, r.merge_key FROM records r WHERE {owned}r.scope_key = {m} "
                f"AND r.label = {m} AND r.merge_key IN ({self._d.marks(len(chunk))})",
                [*params, scope_key, label, *chunk],
            )
            out.update((row[-1], record_row(row[:-1])) for row in rows)
        return out

    def locked_record(self, scope_key: str, record_id: str) -> RecordRow | None:
        """A record by id, as this transaction sees it."""
        owned, params = self._d.owned("r")
        m = self._d.mark
        rows = self._run(
            f"SELECT {RECORD_COLUMNS} FROM records r WHERE {owned}r.scope_key = {m} AND r.record_id = {m}",
            [*params, scope_key, record_id],
        )
        return record_row(rows[0]) if rows else None

    def merge_state(self, rowid: int) -> tuple[str | None, str | None]:
        owned, params = self._d.owned("records")
        rows = self._run(
            f"SELECT merge_key, merge_identity FROM records WHERE {owned}records.rowid = {self._d.mark}",
            [*params, rowid],
        )
        return (rows[0][0], rows[0][1]) if rows else (None, None)

    def replace_properties(self, row: RecordRow, record: NewRecord) -> RecordRow:
        tenant, tenant_params = self._tenant_columns()
        m = self._d.mark
        self._run(
            f"INSERT INTO record_history ({tenant}record, version, properties_json, replaced_at) "
            f"VALUES ({self._d.marks(len(tenant_params) + 4)})",
            [*tenant_params, row.rowid, row.version, row.properties_json, record.at],
        )
        owned, params = self._d.owned("records")
        rows = self._run(
            f"UPDATE records SET properties_json = {m}, version = version + 1, updated_at = {m}, merge_key = {m}, "
            f"merge_identity = COALESCE({m}, merge_identity) "
            f"WHERE {owned}records.rowid = {m} RETURNING {RECORD_COLUMNS}",
            [record.properties_json, record.at, record.merge_key, record.merge_identity, *params, row.rowid],
        )
        self._delete_in("record_values", "record", [row.rowid])
        self._write_values([(row.rowid, record)])
        self._write_texts([(row.rowid, record)], replacing=True)
        return record_row(rows[0])

    def _write_values(self, written: Sequence[tuple[int, NewRecord]]) -> None:
        tenant, tenant_params = self._tenant_columns()
        rows = [
            (*tenant_params, rowid, r.scope.scope_key, r.label, v.name, v.kind, v.key, v.text, v.folded, v.number)
            for rowid, r in written
            for v in r.values
        ]
        if rows:
            self._run_many(
                f"INSERT INTO record_values ({tenant}record, scope_key, label, name, kind, text_key, "
                f"text_value, text_fold, number_value) VALUES ({self._d.marks(len(rows[0]))})",
                rows,
            )

    def _write_texts(self, written: Sequence[tuple[int, NewRecord]], *, replacing: bool) -> None:
        tenant, tenant_params = self._tenant_columns()
        m = self._d.mark
        for rowid, record in written if replacing else ():  # a text that changed is embedded again
            owned, params = self._d.owned("record_vectors")
            keep = [name for name, _ in record.texts]
            gone = f" AND name NOT IN ({self._d.marks(len(keep))})" if keep else ""
            self._run(f"DELETE FROM record_vectors WHERE {owned}record = {m}{gone}", [*params, rowid, *keep])
            for name, text in record.texts:
                self._run(
                    f"UPDATE record_vectors SET text = {m}, embed_state = 'pending', embedding = NULL, "
                    f"embed_attempts = 0, embed_next_at = NULL WHERE record = {m} AND name = {m} "
                    f"AND text <> {m}",
                    [text, rowid, name, text],
                )
        rows = [
            (*tenant_params, rowid, r.scope.scope_key, name, text) for rowid, r in written for name, text in r.texts
        ]
        if rows:
            self._run_many(
                f"INSERT INTO record_vectors ({tenant}record, scope_key, name, text) "
                f"VALUES ({self._d.marks(len(rows[0]))}) ON CONFLICT DO NOTHING",
                rows,
            )

    def _delete_in(self, table: str, column: str, values: Sequence[Any]) -> int:
        owned, params = self._d.owned(table)
        clause = in_clause(f"{table}.{column}", values, self._d)
        return len(self._run(f"DELETE FROM {table} WHERE {owned}{clause.sql} RETURNING 1", params + clause.params))

    def delete_records(self, scope_key: str, rowids: Sequence[int]) -> tuple[int, int]:
        if not rowids:
            return 0, 0
        m = self._d.mark
        owned, params = self._d.owned("relationships")
        marks = self._d.marks(len(rowids))
        edges = self._run(
            f"DELETE FROM relationships WHERE {owned}scope_key = {m} AND ((source_kind = 'RECORD' AND source IN "
            f"({marks})) OR (target_kind = 'RECORD' AND target IN ({marks}))) RETURNING 1",
            [*params, scope_key, *rowids, *rowids],
        )
        for table in ("record_values", "record_vectors", "record_history"):
            self._delete_in(table, "record", rowids)
        return self._delete_in("records", "rowid", rowids), len(edges)

    def link_derivation(self, memory: MemoryRecord, source_event_id: str | None) -> int:
        """Link a fact to the episode it came from (``DERIVED_FROM``), whichever arrived first.

        A fact's ``sourceEventId`` names its episode by eventId or by the host's turn id (the
        episode's own ``sourceEventId``); an episode arriving after its facts picks them up.
        Same scope only, like every relationship. Returns how many links were made.
        """
        m = self._d.mark
        tenant, tenant_params = self._tenant_columns()
        owned, params = self._d.owned("memories")
        insert = (
            f"INSERT INTO relationships ({tenant}scope_key, type, source_kind, source, target_kind, target, "
            "properties_json, created_at) "
        )
        lead = f"{m}, " if tenant else ""
        if memory.source == "MEMORY_FACT":
            if not source_event_id:
                return 0
            # Two index lookups, not an OR of both columns (that reads every episode of the scope).
            episode = f"SELECT rowid FROM memories WHERE {owned}scope_key = {m} AND source = 'EPISODE' AND "
            select = (
                f"SELECT {lead}scope_key, 'DERIVED_FROM', 'MEMORY_FACT', "
                f"{m}, 'EPISODE', rowid, '{{}}', {m} FROM memories WHERE {owned}rowid IN "
                f"({episode}memory_id = {m} UNION {episode}source_event_id = {m})"
            )
            args = [
                *tenant_params,
                memory.rowid,
                memory.recorded_at,
                *params,
                *params,
                memory.scope_key,
                source_event_id,
                *params,
                memory.scope_key,
                source_event_id,
            ]
        else:
            names = [memory.memory_id, *([source_event_id] if source_event_id else [])]
            select = (
                f"SELECT {lead}scope_key, 'DERIVED_FROM', "
                f"'MEMORY_FACT', rowid, 'EPISODE', {m}, '{{}}', {m} FROM memories WHERE {owned}scope_key = {m} "
                f"AND source = 'MEMORY_FACT' AND source_event_id IN ({self._d.marks(len(names))})"
            )
            args = [*tenant_params, memory.rowid, memory.recorded_at, *params, memory.scope_key, *names]
        return len(self._run_planned(insert + select + " ON CONFLICT DO NOTHING RETURNING 1", args))

    def link_many(self, scope_key: str, links: Sequence[tuple[str, NodeRef, NodeRef]], at: str) -> list[Edge]:
        """Create relationships without properties, a few statements per chunk; the ones created
        (those that existed are left out)."""
        tenant, tenant_params = self._tenant_columns()
        width = len(tenant_params) + 8
        created: list[Edge] = []
        for chunk in chunks(links, 500):
            params = [
                x
                for kind, source, target in chunk
                for x in (
                    *tenant_params,
                    scope_key,
                    kind,
                    source.kind,
                    source.rowid,
                    target.kind,
                    target.rowid,
                    "{}",
                    at,
                )
            ]
            rows = self._run(
                f"INSERT INTO relationships ({tenant}scope_key, type, source_kind, source, target_kind, target, "
                f"properties_json, created_at) VALUES {', '.join(f'({self._d.marks(width)})' for _ in chunk)} "
                f"ON CONFLICT DO NOTHING RETURNING {EDGE_COLUMNS}",
                params,
            )
            created += [edge(r) for r in rows]
        return created

    def holds(self, scope_key: str, node: NodeRef) -> bool:
        table = "records" if node.kind == "RECORD" else "memories"
        owned, params = self._d.owned(table)
        m = self._d.mark
        return bool(
            self._run(
                f"SELECT 1 FROM {table} WHERE {owned}rowid = {m} AND scope_key = {m}{self._d.share_lock}",
                [*params, node.rowid, scope_key],
            )
        )

    def link(
        self, scope_key: str, type: str, source: NodeRef, target: NodeRef, properties_json: str, at: str
    ) -> tuple[Edge, bool]:
        tenant, tenant_params = self._tenant_columns()
        rows = self._run(
            f"INSERT INTO relationships ({tenant}scope_key, type, source_kind, source, target_kind, target, "
            f"properties_json, created_at) VALUES ({self._d.marks(len(tenant_params) + 8)}) "
            f"ON CONFLICT DO NOTHING RETURNING {EDGE_COLUMNS}",
            [
                *tenant_params,
                scope_key,
                type,
                source.kind,
                source.rowid,
                target.kind,
                target.rowid,
                properties_json,
                at,
            ],
        )
        if rows:
            return edge(rows[0]), True
        return self._edge(scope_key, type, source, target), False

    def _edge(self, scope_key: str, type: str, source: NodeRef, target: NodeRef) -> Edge:
        m = self._d.mark
        owned, params = self._d.owned("relationships")
        rows = self._run(
            f"SELECT {EDGE_COLUMNS} FROM relationships WHERE {owned}scope_key = {m} AND type = {m} "
            f"AND source_kind = {m} AND source = {m} AND target_kind = {m} AND target = {m}",
            [*params, scope_key, type, source.kind, source.rowid, target.kind, target.rowid],
        )
        return edge(rows[0])

    def unlink(self, scope_key: str, type: str, source: NodeRef, target: NodeRef) -> bool:
        m = self._d.mark
        owned, params = self._d.owned("relationships")
        return bool(
            self._run(
                f"DELETE FROM relationships WHERE {owned}scope_key = {m} AND type = {m} AND source_kind = {m} "
                f"AND source = {m} AND target_kind = {m} AND target = {m} RETURNING 1",
                [*params, scope_key, type, source.kind, source.rowid, target.kind, target.rowid],
            )
        )
