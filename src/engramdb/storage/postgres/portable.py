"""Export and import of one PostgreSQL tenant (the JSONL rows ``engram export``/``import`` carry)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import psycopg

from engramdb.errors import ConflictError
from engramdb.lexical.body import lexical_text
from engramdb.storage.columns import (
    EXPORT_COLUMNS,
    TENANT_WIDE,
    embedding_from_text,
    embedding_to_text,
    export_statement,
)
from engramdb.storage.coverage import DIGESTS_KEY, CoverageReads, ensure_covered
from engramdb.storage.knowledge import portable as knowledge
from engramdb.storage.knowledge.sql import Dialect
from engramdb.storage.postgres.transaction import PostgresTransaction, runner


def export_rows(
    conn: psycopg.Connection, tenant: str, scope_keys: Sequence[str] | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield every exportable row of the tenant, or the rows of ``scope_keys`` only (read through
    each table's index by scope; no tenant-wide row)."""
    # The participant salt travels with the tenant: without it no userId finds its memories again.
    if scope_keys is None:
        meta = conn.execute(
            "SELECT key, value FROM meta WHERE tenant = %s AND key IN ('policy', 'participant_salt', 'audit_digests') "
            "ORDER BY key DESC",
            (tenant,),
        )
        for key, value in meta:
            yield "meta", {"key": key, "value": value}
    dialect = Dialect("%s", tenant)
    for table, columns in EXPORT_COLUMNS.items():
        if scope_keys is not None and table in TENANT_WIDE:
            continue
        cursor = conn.execute(*export_statement(dialect, table, columns, scope_keys))
        for values in cursor:
            row = dict(zip(columns, values, strict=True))
            if table == "memories":
                row["embedding"] = embedding_to_text(row["embedding"])
            yield table, row
    yield from knowledge.export_rows(runner(conn), dialect, embedding_to_text, scope_keys)


# As migration 004 does for stored rows: each superseded fact stops holding where its successor starts.
_CLOSE_SUPERSEDED = (
    "UPDATE memories m SET invalid_at = s.valid_from FROM memories s "
    "WHERE m.tenant = %s AND m.source = 'MEMORY_FACT' AND m.superseded_by_id IS NOT NULL "
    "AND m.invalid_at IS NULL AND s.tenant = m.tenant AND s.scope_key = m.scope_key "
    "AND s.source = 'MEMORY_FACT' AND s.memory_id = m.superseded_by_id"
)

# As migration 007 does: the column from the event, then the DERIVED_FROM links it implies.
_FILL_SOURCE_EVENTS = (
    "UPDATE memories SET source_event_id = event_json::jsonb ->> 'sourceEventId' "
    "WHERE tenant = %s AND source_event_id IS NULL"
)
_LINK_DERIVATIONS = (
    "INSERT INTO relationships (tenant, scope_key, type, source_kind, source, target_kind, target, "
    "properties_json, created_at) SELECT f.tenant, f.scope_key, 'DERIVED_FROM', 'MEMORY_FACT', f.rowid, "
    "'EPISODE', e.rowid, '{}', f.recorded_at FROM memories f JOIN memories e ON e.tenant = f.tenant "
    "AND e.scope_key = f.scope_key AND e.source = 'EPISODE' "
    "AND (e.memory_id = f.source_event_id OR e.source_event_id = f.source_event_id) "
    "WHERE f.tenant = %s AND f.source = 'MEMORY_FACT' AND f.source_event_id IS NOT NULL ON CONFLICT DO NOTHING"
)


def import_rows(conn: psycopg.Connection, tenant: str, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
    """Insert exported rows verbatim (inside the caller's transaction) into an empty tenant."""
    busy = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM memories WHERE tenant = %s) "
        "OR EXISTS (SELECT 1 FROM audit_log WHERE tenant = %s) OR EXISTS (SELECT 1 FROM records WHERE tenant = %s)",
        (tenant, tenant, tenant),
    ).fetchone()
    if busy and busy[0]:
        raise ConflictError("the target tenant is not empty; import needs an empty tenant", field="tenant")
    tx = PostgresTransaction(conn, tenant)
    conn.execute("DELETE FROM meta WHERE tenant = %s AND key = %s", (tenant, DIGESTS_KEY))  # the export says
    counts: dict[str, int] = {}
    graph = knowledge.Importer(runner(conn), Dialect("%s", tenant), embedding_from_text)
    for table, row in rows:
        if table == "meta":
            tx.put_meta(row["key"], row["value"])
        elif table in EXPORT_COLUMNS:
            _insert(conn, tenant, table, row, tx.seq)
        elif table in knowledge.TABLES:
            graph.add(table, row)
        else:
            raise ConflictError(f"unknown table {table!r} in the import", field="table")
        counts[table] = counts.get(table, 0) + 1
    conn.execute(_CLOSE_SUPERSEDED, (tenant,))  # an export from before invalid_at carries none
    conn.execute(_FILL_SOURCE_EVENTS, (tenant,))  # nor one from before source_event_id
    conn.execute(_LINK_DERIVATIONS, (tenant,))
    ensure_covered(tx, CoverageReads(runner(conn), Dialect("%s", tenant)), tenant)  # rows exported before digests
    return counts


def _insert(conn: psycopg.Connection, tenant: str, table: str, row: dict[str, Any], seq: int) -> None:
    columns = list(EXPORT_COLUMNS[table])
    values: list[Any] = [row.get(c) for c in columns]
    if table == "memories":
        values[columns.index("embedding")] = embedding_from_text(row.get("embedding"))
        values[columns.index("sandbox_eligible")] = bool(row["sandbox_eligible"])
        columns += ["lexical_body", "change_seq"]
        values += [lexical_text(row["text"], row.get("subject_key"), row.get("kind")), seq]
    conn.execute(
        f"INSERT INTO {table} (tenant, {', '.join(columns)}) VALUES ({', '.join(['%s'] * (len(columns) + 1))})",
        [tenant, *values],
    )
