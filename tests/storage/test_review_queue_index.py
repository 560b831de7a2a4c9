"""The review queue (every dashboard page counts it) is read through an index of the pending facts,
in new and older SQLite files: it read every fact of the tenant (236-353 ms with 1,000,000 memories,
a review helper's script, session 45)."""

from __future__ import annotations

import sqlite3
from typing import Any

from engramdb.storage.columns import MEMORY_COLUMNS
from engramdb.storage.sqlite.store import SQLiteStore

QUEUE = (  # the store's statement (storage/sqlite/tenant.py review_queue)
    f"SELECT {MEMORY_COLUMNS}, agent_id, profile_id, privacy_scope, participant_scope_hash, sandbox_eligible "
    "FROM memories WHERE source = 'MEMORY_FACT' AND status = 'pending_review' ORDER BY recorded_at, rowid LIMIT 100"
)


def _plan(path: Any) -> str:
    with sqlite3.connect(path) as conn:
        return " ".join(str(r[3]) for r in conn.execute(f"EXPLAIN QUERY PLAN {QUEUE}"))


def test_the_queue_is_read_from_its_index_in_a_new_and_an_older_file(settings: Any) -> None:
    store = SQLiteStore(settings.home)
    path = store.tenant("t1", create=True).path
    store.close()
    assert "memories_pending_review" in _plan(path)  # a new file has it
    with sqlite3.connect(path) as conn:  # what an earlier version's file had
        conn.execute("DROP INDEX memories_pending_review")
    assert "memories_pending_review" not in _plan(path)  # the control: without it, another way
    reopened = SQLiteStore(settings.home)
    reopened.tenant("t1")
    reopened.close()
    assert "memories_pending_review" in _plan(path)
