"""A key bound to one scope reads its change feed through the scope's own entries, on both backends.

Its statement filters the audit log by scope and stops at a page of rows found, so without an index
on (scope, seq) one read from ``after=0`` went through every other scope's entries: 0.4-0.5 s a read
with 600,000 of them (a review helper, session 44), repeatable at will. What is counted here is the
rows the statement reads (SQLite's virtual-machine steps, PostgreSQL's rows scanned), never a time;
the same statement without the index is the positive control that the count sees a scan.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import psycopg
import pytest

from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.changes.kinds import actions_of
from engramdb.core.service import MemoryService
from engramdb.storage.feed.changes import ChangeLog
from engramdb.storage.knowledge.rows import Run
from engramdb.storage.port import AuditDraft, Store
from engramdb.storage.postgres.store import PostgresStore
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import episode_body, participant, scope_fields

OTHERS = 5_000  # another scope's entries after the cursor
MINE = scope_fields(participantScopeHash=participant("bob"))


def _statement(store: Store, service: MemoryService) -> tuple[str, list[Any], list[int]]:
    """The feed's statement for bob's key from ``after=0``, and the seqs of the changes it answered."""
    seen: list[tuple[str, list[Any]]] = []
    changes = store.tenant("t1").changes
    assert isinstance(changes, ChangeLog)  # both backends' feed: its runner is wrapped to see the statement
    real: Run = changes._run

    def recording(sql: str, params: Sequence[Any]) -> list[Any]:
        seen.append((sql, list(params)))
        return real(sql, params)

    changes._run = recording
    key = auth.scope_key(Scope.model_validate(MINE))
    found = changes.changes(0, 500, actions_of([]), through_seq=changes.head(), scope_key=key)
    [(sql, params)] = [s for s in seen if "FROM audit_log a" in s[0]]
    return sql, params, [c.seq for c in found]


def _seed(store: Store, service: MemoryService) -> None:
    store.tenant("t1", create=True)
    bob = Caller(tenant="t1", key_id="k-bob", role="agent", grant=MINE)
    service.writes.write_episode(bob, EpisodeWrite.model_validate(episode_body("bob's turn", scope=MINE)))
    other = auth.scope_key(Scope.model_validate(scope_fields()))
    with store.tenant("t1").transaction() as tx:  # as the writes of another scope audit them
        draft = AuditDraft(action="episode.write", actor_key_id=None, actor_role="agent", target_kind="EPISODE")
        tx.audit_many([replace(draft, target_id=f"{i:032x}", scope_key=other) for i in range(OTHERS)])
    service.writes.write_episode(bob, EpisodeWrite.model_validate(episode_body("bob again", scope=MINE, turn=1)))


def _sqlite_steps(store: SQLiteStore, sql: str, params: list[Any]) -> int:
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn = sqlite3.connect(store.home / "tenants" / "t1.sqlite3")
    try:
        conn.set_progress_handler(count, 10)
        conn.execute(sql, params).fetchall()
    finally:
        conn.close()
    return steps * 10


def _postgres_rows(store: PostgresStore, sql: str, params: list[Any], *settings: str) -> int:
    def scanned(node: dict[str, Any]) -> int:
        own = node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0) if "Scan" in node["Node Type"] else 0
        return int(own) + sum(scanned(child) for child in node.get("Plans", []))

    with psycopg.connect(store.url) as conn:
        conn.execute(f"SET search_path TO {store.schema}, public")
        # The planner as it would be once autovacuum saw the rows (a schema an earlier test emptied
        # keeps the statistics of a small table, and a small table is read whole).
        conn.execute("ANALYZE audit_log")
        for setting in settings:
            conn.execute(setting)
        row = conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params).fetchone()
    assert row is not None
    plan = row[0] if isinstance(row[0], list) else json.loads(row[0])
    return scanned(plan[0]["Plan"])


@pytest.mark.fresh_schema  # a plan check: an emptied schema's leftover index pages sway the plan
def test_a_scoped_keys_feed_reads_its_scopes_entries_not_every_scopes(store: Store, service: MemoryService) -> None:
    _seed(store, service)
    sql, params, found = _statement(store, service)
    assert len(found) == 2  # bob's two writes, found past the other scope's entries
    if isinstance(store, SQLiteStore):
        unindexed = sql.replace("FROM audit_log a", "FROM audit_log a NOT INDEXED")
        indexed_cost, scan_cost = _sqlite_steps(store, sql, params), _sqlite_steps(store, unindexed, params)
    else:
        assert isinstance(store, PostgresStore)
        indexed_cost = _postgres_rows(store, sql, params)
        scan_cost = _postgres_rows(store, sql, params, "SET enable_indexscan = off", "SET enable_bitmapscan = off")
    assert scan_cost >= OTHERS, scan_cost  # the positive control: a scan is seen as one
    assert indexed_cost < OTHERS / 4, (indexed_cost, scan_cost)
