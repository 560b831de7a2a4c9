"""Reads that went through a whole table of the tenant go through an index, in new and older SQLite files
(a review helper's script on a 1,000,000-memory tenant, session 45): the review queue, which the
dashboard's header counts on every page (236-353 ms), and a slot's tombstones with the lifted ones,
which a fact's history and a deletion read (18-30 ms, a deletion inside the write lock), and the audit
log by a target's id alone, which a fact's timeline asks once a version (0.4-0.5 s each); and a participant's
scopes, which its export and its erasure read (tests/storage/test_participant_rows.py); and a fact slot's
versions by their starts and their ends, which each write into the slot reads (tests/storage/test_slot_reads.py);
and a scope's values by label, property and kind, which its schema counts (tests/knowledge/test_schema.py)."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from engramdb.storage.columns import AUDIT_COLUMNS, MEMORY_COLUMNS, TOMBSTONE_COLUMNS
from engramdb.storage.fact_search.sql import Dialect
from engramdb.storage.review_queue import count_statement
from engramdb.storage.sqlite.store import SQLiteStore

_SLOT = (
    "scope_key = 'k' AND subject_key = 'user' AND kind = 'city' AND source = 'MEMORY_FACT' "
    "AND status IN ('superseded', 'expired')"
)
READS = {  # the stores' statements (storage/sqlite/tenant.py), by the index that serves each
    "memories_pending_review": (
        f"SELECT {MEMORY_COLUMNS}, agent_id, profile_id, privacy_scope, participant_scope_hash, sandbox_eligible "
        "FROM memories WHERE source = 'MEMORY_FACT' AND status = 'pending_review' ORDER BY recorded_at, rowid LIMIT 100"
    ),
    "audit_log_by_target_id": (
        f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE seq > 0 AND target_id = 'x' ORDER BY seq LIMIT 100"
    ),
    "scopes_by_participant": "SELECT scope_key FROM scopes WHERE participant_scope_hash = 'p'",
    "memories_slot_starts": f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {_SLOT} AND valid_from >= 'x'",
    "memories_slot_ends": f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {_SLOT} AND invalid_at > 'x'",
    "record_values_catalog": (
        "SELECT v.label, v.name, v.kind, count(DISTINCT v.record) FROM record_values v WHERE v.scope_key = 'k' "
        "GROUP BY v.label, v.name, v.kind ORDER BY v.label, v.name, v.kind"
    ),
    "tombstones_by_slot": (
        f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE scope_key = 'k' AND subject_key = 'user' AND kind = 'city' "
        "ORDER BY created_at"
    ),
}


def _plan(path: Any, statement: str) -> str:
    with sqlite3.connect(path) as conn:
        return " ".join(str(r[3]) for r in conn.execute(f"EXPLAIN QUERY PLAN {statement}"))


@pytest.mark.parametrize("index", sorted(READS))
def test_the_read_uses_its_index_in_a_new_and_an_older_file(settings: Any, index: str) -> None:
    store = SQLiteStore(settings.home)
    path = store.tenant("t1", create=True).path
    store.close()
    assert index in _plan(path, READS[index])  # a new file has it
    with sqlite3.connect(path) as conn:  # what an earlier version's file had
        conn.execute(f"DROP INDEX {index}")
    assert index not in _plan(path, READS[index])  # the control: without it, another way
    reopened = SQLiteStore(settings.home)
    reopened.tenant("t1")
    reopened.close()
    assert index in _plan(path, READS[index])


def test_the_review_count_reads_the_pending_facts_index(settings: Any) -> None:
    """Every dashboard page counts the review queue; SQLite, with no statistics, counted it through the index
    of every fact by time (a review's script: 0.73 s at 200,000 facts, 2,000 pending)."""
    store = SQLiteStore(settings.home)
    path = store.tenant("t1", create=True).path
    store.close()
    for kind in (None, "city"):
        sql, params = count_statement(Dialect("?"), kind, None, None)
        with sqlite3.connect(path) as conn:
            plan = " ".join(str(r[3]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
        assert "memories_pending_review" in plan, plan
    unforced = sql.replace(" INDEXED BY memories_pending_review", "")  # the control: what it read otherwise
    assert "memories_pending_review" not in _plan(path, unforced.replace("?", "'city'"))
