"""Export and import of one SQLite tenant (the JSONL rows ``engram export``/``import`` carry)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from engramdb.errors import ConflictError
from engramdb.storage.columns import (
    EXPORT_COLUMNS,
    TENANT_WIDE,
    embedding_from_text,
    embedding_to_text,
    export_statement,
)
from engramdb.storage.coverage import DIGESTS_KEY, CoverageReads, ensure_covered
from engramdb.storage.knowledge import portable as knowledge
from engramdb.storage.sqlite.sql import CLOSE_SUPERSEDED_SQL, FILL_SOURCE_EVENTS_SQL, LINK_DERIVATIONS_SQL
from engramdb.storage.sqlite.transaction import SQLITE, SQLiteTransaction, runner


def export_rows(
    conn: sqlite3.Connection, scope_keys: Sequence[str] | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield every exportable row of the tenant file, or the rows of ``scope_keys`` only (read through
    each table's index by scope; no tenant-wide row)."""
    # The participant salt travels with the tenant: without it no userId finds its memories again.
    meta = "SELECT key, value FROM meta WHERE key IN ('policy', 'participant_salt', 'audit_digests') ORDER BY key DESC"
    for key, value in conn.execute(meta) if scope_keys is None else ():
        yield "meta", {"key": key, "value": value}
    for table, columns in EXPORT_COLUMNS.items():
        if scope_keys is not None and table in TENANT_WIDE:
            continue
        cursor = conn.execute(*export_statement(SQLITE, table, columns, scope_keys))
        for values in cursor:
            row = dict(zip(columns, values, strict=True))
            if table == "memories":
                row["sandbox_eligible"] = bool(row["sandbox_eligible"])
                row["embedding"] = embedding_to_text(row["embedding"])
            yield table, row
    yield from knowledge.export_rows(runner(conn), SQLITE, embedding_to_text, scope_keys)


def import_rows(conn: sqlite3.Connection, rows: Iterable[tuple[str, dict[str, Any]]], tenant: str) -> dict[str, int]:
    """Insert exported rows verbatim (inside the caller's transaction) into an empty tenant; rows
    exported before the audit's digests covered them are covered (storage/coverage.py)."""
    if conn.execute(
        "SELECT EXISTS (SELECT 1 FROM memories) OR EXISTS (SELECT 1 FROM audit_log) OR EXISTS (SELECT 1 FROM records)"
    ).fetchone()[0]:
        raise ConflictError("the target tenant is not empty; import needs an empty tenant", field="tenant")
    tx = SQLiteTransaction(conn)
    seq = tx._change_seq()
    conn.execute("DELETE FROM meta WHERE key = ?", (DIGESTS_KEY,))  # an export says which digests cover its rows
    counts: dict[str, int] = {}
    graph = knowledge.Importer(runner(conn), SQLITE, _vector_bytes)
    for table, row in rows:
        if table == "meta":
            tx.put_meta(row["key"], row["value"])
        elif table in EXPORT_COLUMNS:
            _insert(conn, table, row, seq)
        elif table in knowledge.TABLES:
            graph.add(table, row)
        else:
            raise ConflictError(f"unknown table {table!r} in the import", field="table")
        counts[table] = counts.get(table, 0) + 1
    conn.execute(CLOSE_SUPERSEDED_SQL)  # an export from before invalid_at carries none
    conn.execute(FILL_SOURCE_EVENTS_SQL)  # nor one from before source_event_id
    conn.execute(LINK_DERIVATIONS_SQL)
    ensure_covered(tx, CoverageReads(runner(conn), SQLITE), tenant)
    return counts


def _vector_bytes(text: str | None) -> bytes | None:
    vector = embedding_from_text(text)
    return None if vector is None else vector.tobytes()


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, Any], seq: int) -> None:
    columns = EXPORT_COLUMNS[table]
    values = [row.get(c) for c in columns]
    if table == "memories":
        vector = embedding_from_text(row.get("embedding"))
        values[columns.index("embedding")] = None if vector is None else vector.tobytes()
        values[columns.index("sandbox_eligible")] = int(bool(row["sandbox_eligible"]))
        values.append(seq)
        conn.execute(
            f"INSERT INTO memories ({', '.join(columns)}, change_seq) VALUES ({', '.join('?' * (len(columns) + 1))})",
            values,
        )
        return
    conn.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", values)
