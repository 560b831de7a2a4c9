"""The embedding worker's question "which rows are due?" reads the due index, not the table.

Asked in its first form, SQLite walked every row in rowid order to find the few pending ones:
10 ms per worker pass at 10,000 memories, the write path's largest cost under load (issue 21).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engramdb.storage.sqlite.store import SQLiteStore

# The first form, kept as the positive control: the check below must see it scan the table.
_OLD_FORM = (
    "SELECT rowid, embed_text, embed_attempts FROM memories WHERE embed_state = 'pending' OR "
    "(embed_state = 'failed' AND embed_next_at <= ?) ORDER BY rowid LIMIT ?"
)


def _plan(conn: sqlite3.Connection, sql: str) -> str:
    rows = conn.execute("EXPLAIN QUERY PLAN " + sql, ["2026-12-01T00:00:00Z", 64][: sql.count("?")]).fetchall()
    return " | ".join(str(row[-1]) for row in rows)


def _reads_whole_table(plan: str, table: str) -> bool:
    return any(step.strip() == f"SCAN {table}" for step in plan.split("|"))


def test_due_rows_are_read_through_the_due_indexes(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    tenant = store.tenant("t", create=True)
    seen: list[str] = []
    for db in (tenant._db, tenant._graph_db):  # the backend's own connections
        with db.reading() as conn:
            conn.set_trace_callback(seen.append)
    assert tenant.embedding_jobs(64, "2026-12-01T00:00:00Z") == []
    assert tenant.record_embedding_jobs(64, "2026-12-01T00:00:00Z") == []
    asked = {
        table: next(s for s in seen if f"FROM {table} WHERE rowid IN" in s) for table in ("memories", "record_vectors")
    }
    with tenant._db.reading() as conn:
        assert _reads_whole_table(_plan(conn, _OLD_FORM), "memories")  # the check can fail
        plan = _plan(conn, asked["memories"])
        assert "memories_embedding_due" in plan and not _reads_whole_table(plan, "memories"), plan
        assert tenant.embedding_backlog() == 0
        backlog = next(s for s in seen if "count(*) FROM memories WHERE embed_state != 'ready'" in s)
        plan = _plan(conn, backlog)  # what /metrics asks on every scrape
        assert "memories_embedding_due" in plan and not _reads_whole_table(plan, "memories"), plan
    with tenant._graph_db.reading() as conn:
        plan = _plan(conn, asked["record_vectors"])
        assert "record_vectors_due" in plan and not _reads_whole_table(plan, "record_vectors"), plan
    store.close()
