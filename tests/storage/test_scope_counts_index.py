"""The scopes' counts (every dashboard page asks for them) come from an index, in new and older SQLite files."""

from __future__ import annotations

import sqlite3

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.storage.scope_listing import COUNTS
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import episode_body, scope_fields


def _plan(path: object) -> str:
    with sqlite3.connect(str(path)) as conn:
        sql = f"EXPLAIN QUERY PLAN {COUNTS}scope_key IN ('a', 'b') GROUP BY scope_key"
        return " ".join(str(r[3]) for r in conn.execute(sql))


def test_an_older_file_gets_the_index_and_the_counts_read_only_it(settings: Settings) -> None:
    caller = Caller(tenant="t1", key_id="test-operator", role="admin")
    store = SQLiteStore(settings.home)
    path = store.tenant("t1", create=True).path
    service = MemoryService(store, HashingEmbedder(), settings)
    service.writes.write_episode(caller, EpisodeWrite.model_validate(episode_body(scope=scope_fields())))
    store.close()
    assert "COVERING INDEX memories_by_scope_stats" in _plan(path)  # a new file has it
    with sqlite3.connect(path) as conn:  # what an earlier version's schema had
        conn.execute("DROP INDEX memories_by_scope_stats")
    assert "memories_by_scope_stats" not in _plan(path)  # the control: without it, the table is read
    reopened = SQLiteStore(settings.home)
    try:
        stats = reopened.tenant("t1").scope_stats({}, order="recent", after=None, limit=10).scopes
        assert [(s.episodes, s.facts) for s in stats] == [(1, 0)]
    finally:
        reopened.close()
    assert "COVERING INDEX memories_by_scope_stats" in _plan(path)
