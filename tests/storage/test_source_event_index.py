"""A fact's episode is found through the index alone, however many facts share its sourceEventId.

The LangGraph store gives every item's versions the sourceEventId "langgraph". Each fact's write
looks for the episode it came from (``link_derivation``). With an index of the scope and the
sourceEventId alone, SQLite read every fact of that sourceEventId on each write, and PostgreSQL
every episode of the scope: a put that grew with the store. With the kind in the index the lookup
passes over nothing. The statement is the store's own, taken from a write's transaction (rolled
back); each check has the earlier index beside it as its control, and an older SQLite file is
brought up to date when opened.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import psycopg
import pytest

from engramdb.config import Settings
from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.auth import Caller, scope_key
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.storage.knowledge.writes import GraphWrites
from engramdb.storage.port import Store
from engramdb.storage.postgres.store import PostgresStore
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import episode_body, fact_body, scope_fields
from tests.pg_schemas import SchemaPool

SCOPE = scope_fields()
SHARED = "langgraph"
MANY = 40
EARLIER = {  # the index as the earlier versions made it
    "sqlite": "CREATE INDEX memories_by_source_event ON memories (scope_key, source_event_id) "
    "WHERE source_event_id IS NOT NULL",
    "postgres": "CREATE INDEX memories_by_source_event ON memories (tenant, scope_key, source_event_id) "
    "WHERE source_event_id IS NOT NULL",
}
Statement = tuple[str, Sequence[Any]]
BY_KIND = "memories_by_source_event (scope_key=? AND source=? AND source_event_id=?)"  # SQLite's plan, new index


class _Taken(Exception):
    def __init__(self, statement: Statement) -> None:
        self.statement = statement


def _lookup_statement(service: MemoryService, operator: Caller) -> Statement:
    """Fill a scope with MANY episodes and MANY facts of one sourceEventId; the statement that
    links the last fact to its episode, as its write runs it."""
    episodes = [episode_body(f"turn {i}", session="s", turn=i, scope=SCOPE) for i in range(MANY)]
    service.writes.write_episodes(operator, [EpisodeWrite.model_validate(b) for b in episodes])
    for i in range(MANY):
        body = fact_body(f"item {i}", subject=f"item-{i}", kind="note", sourceEventId=SHARED, scope=SCOPE)
        written = service.writes.write_fact(operator, FactWrite.model_validate(body))
    tenant = service.shared.store.tenant("t1")
    record = tenant.get_memory(scope_key(Scope.model_validate(SCOPE)), "MEMORY_FACT", written.id)
    assert record is not None
    try:
        with tenant.transaction() as tx:
            assert isinstance(tx, GraphWrites)  # both backends' transactions write the graph through it

            def take(sql: str, params: Sequence[Any]) -> list[Any]:
                raise _Taken((sql, list(params)))

            tx._run_planned = take  # this transaction alone, rolled back
            tx.link_derivation(record, SHARED)
    except _Taken as taken:
        return taken.statement
    raise AssertionError("the write looked for no episode")


def _sqlite_plan(path: object, statement: Statement) -> str:
    with sqlite3.connect(str(path)) as conn:
        return " | ".join(str(row[-1]) for row in conn.execute("EXPLAIN QUERY PLAN " + statement[0], statement[1]))


def _pg_passed_over(store: PostgresStore, statement: Statement) -> int:
    """Rows of memories the statement read and dropped: run by EXPLAIN ANALYZE, as the store's own
    role and tenant, then rolled back. Sequential scans are off: a table this small is cheapest read
    whole, and the question is whether an index answers the lookup exactly, as on a large one."""
    with psycopg.connect(store.url) as conn:
        conn.execute(f"ANALYZE {store.schema}.memories")
        conn.execute("SET LOCAL enable_seqscan = off")
        conn.execute("SET ROLE engram_app")
        conn.execute(f"SET search_path TO {store.schema}, public")
        conn.execute("SELECT set_config('engram.tenant', 't1', true)")
        [[plan]] = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement[0], statement[1]).fetchall()
        conn.rollback()
    plan = plan if isinstance(plan, list) else json.loads(plan)

    def dropped(node: dict[str, Any]) -> int:
        own = node.get("Rows Removed by Filter", 0) if node.get("Relation Name") == "memories" else 0
        return int(own) + sum(dropped(child) for child in node.get("Plans", []))

    return dropped(plan[0]["Plan"])


def _earlier_index(store: Store, backend: str) -> None:
    """Put back the index as the earlier versions made it."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(str(store.tenant("t1").path)) as conn:
            conn.executescript(f"DROP INDEX memories_by_source_event; {EARLIER[backend]}")
        return
    assert isinstance(store, PostgresStore)
    with psycopg.connect(store.url, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {store.schema}, public")
        conn.execute(f"DROP INDEX memories_by_source_event; {EARLIER[backend]}")


@pytest.mark.fresh_schema  # a plan check: an emptied schema's leftover index pages sway the plan
def test_a_facts_episode_is_looked_up_by_its_kind_however_many_facts_share_its_source_event(
    backend: str, store: Store, service: MemoryService, operator: Caller, settings: Settings
) -> None:
    statement = _lookup_statement(service, operator)
    if isinstance(store, SQLiteStore):
        path = store.tenant("t1").path
        assert BY_KIND in _sqlite_plan(path, statement)
        _earlier_index(store, backend)  # the control: it reads every fact of the sourceEventId
        assert "memories_by_source_event (scope_key=? AND source_event_id=?)" in _sqlite_plan(path, statement)
        reopened = SQLiteStore(settings.home)
        reopened.tenant("t1")  # opening the older file brings its index up to date
        reopened.close()
        assert BY_KIND in _sqlite_plan(path, statement)
        return
    assert isinstance(store, PostgresStore)
    assert _pg_passed_over(store, statement) == 0
    _earlier_index(store, backend)  # the control: the lookup passes over the scope's episodes or facts
    assert _pg_passed_over(store, statement) >= MANY


@pytest.mark.postgres
def test_postgres_plans_the_lookup_for_its_values_on_every_write(schema_pool: SchemaPool, settings: Settings) -> None:
    """Prepared, the lookup's generic plan read every memory of the tenant (PostgreSQL cannot tell how
    many share a scope and sourceEventId); psycopg prepares a statement on its fifth run. Twenty
    writes on a pool of two connections (one ran ten at least): the memory's insert is prepared (the
    control), the lookup never."""
    operator = Caller(tenant="t1", key_id="test-operator", role="admin")
    store = schema_pool.open(max_connections=2, search_connections=1)
    try:
        service = MemoryService(store, HashingEmbedder(), settings)
        store.tenant("t1", create=True)
        for i in range(20):
            body = fact_body(f"item {i}", subject=f"item-{i}", kind="note", sourceEventId=SHARED, scope=SCOPE)
            service.writes.write_fact(operator, FactWrite.model_validate(body))
        held = [store._pool.getconn() for _ in range(2)]  # every connection of the pool
        try:
            prepared = [r[0] for c in held for r in c.execute("SELECT statement FROM pg_prepared_statements")]
        finally:
            for conn in held:
                store._pool.putconn(conn)
    finally:
        store.close()
        schema_pool.give_back(store.schema)
    assert any(s.startswith("INSERT INTO memories") for s in prepared), prepared
    assert not any("'DERIVED_FROM'" in s for s in prepared), prepared
