"""Every PostgreSQL statement runs under a statement timeout (issue 30, finding 1).

A statement past it is cancelled by the server (SQLSTATE 57014) and leaves the store as
QueryTimeoutError: 503 ``query_timeout``, retryable, with Retry-After; its connection goes back to
the pool at once. Maintenance work runs under its own, longer timeout, for its transactions only.
SQLite has no statement timeout (a search there holds a reader of its own thread, not a pooled
connection another request needs).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.errors import QueryTimeoutError
from engramdb.storage.postgres.store import PostgresStore
from engramdb.storage.postgres.tenant import PostgresTenantStore
from tests.conftest import LiveServer
from tests.knowledge.hostile import SLOWEST, seed_records

pytestmark = pytest.mark.postgres
RECORDS = 5_000


@pytest.fixture
def schema() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def short(pg_url: str, schema: str) -> Iterator[PostgresStore]:
    """A store whose requests' statements may run 0.1 s, maintenance work's 30 s; one connection."""
    store = PostgresStore(pg_url, schema=schema, statement_timeout=0.1, maintenance_timeout=30, max_connections=1)
    yield store
    store.close()


def _tenant(store: PostgresStore) -> PostgresTenantStore:
    return store.tenant("t1", create=True)


def test_a_statement_past_the_timeout_is_a_retryable_query_timeout(short: PostgresStore) -> None:
    tenant = _tenant(short)
    assert tenant._all("SELECT pg_sleep(0.01)") == [("",)]  # the positive control: a short one runs
    with pytest.raises(QueryTimeoutError) as timed_out:
        tenant._all("SELECT pg_sleep(2)")
    error = timed_out.value
    assert (error.code, error.http_status, error.retryable) == ("query_timeout", 503, True)
    assert error.context["retryAfterSeconds"] > 0
    assert isinstance(error.__cause__, psycopg.errors.QueryCanceled) and error.__cause__.sqlstate == "57014"
    assert "pg_sleep" not in error.message and "57014" not in str(error.to_dict())
    assert tenant._all("SELECT 1") == [(1,)]  # the one connection is back, and serves


def test_maintenance_work_runs_under_its_own_timeout_for_its_transactions_only(short: PostgresStore) -> None:
    tenant = _tenant(short)
    assert tenant._all("SHOW statement_timeout") == [("100ms",)]
    with tenant.aging.maintenance():
        assert tenant._all("SHOW statement_timeout") == [("30s",)]
        assert tenant._all("SELECT pg_sleep(0.3)") == [("",)]
    assert tenant._all("SHOW statement_timeout") == [("100ms",)]  # the same pooled connection: not kept
    with pytest.raises(QueryTimeoutError):  # the positive control: outside, the same statement is cancelled
        tenant._all("SELECT pg_sleep(0.3)")
    short.maintain()  # VACUUM on a connection of its own, under the maintenance timeout


def _active_statements(pg_url: str) -> list[str]:
    """The statements on this store's tables that a client is running now (from another session;
    PostgreSQL's own autovacuum of the table is not one of them)."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT query FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() "
            "AND backend_type = 'client backend' AND query LIKE '%record_values%'"
        ).fetchall()
    return [r[0] for r in rows]


def test_a_search_past_the_timeout_answers_503_with_retry_after_and_frees_its_connection(
    pg_url: str, schema: str, settings: Settings
) -> None:
    seeding = PostgresStore(pg_url, schema=schema)
    server = LiveServer(settings, seeding, HashingEmbedder())
    server.start()
    token = server.key()
    with server.client(token) as http:
        seed_records(http, RECORDS)
        with ThreadPoolExecutor(1) as pool:  # the default timeout: it runs, and is seen running meanwhile
            search = pool.submit(http.post, "/v1/records/search", json=SLOWEST)
            while not _active_statements(pg_url) and not search.done():
                time.sleep(0.01)
            assert not search.done()  # the positive control of the check at the end
            assert search.result().json()["total"] == RECORDS
    server.stop()  # and closes its store
    # The same data served with a statement timeout the search cannot meet (0.3-0.5 s here).
    store = PostgresStore(pg_url, schema=schema, statement_timeout=0.15)
    server = LiveServer(settings, store, HashingEmbedder())
    server.start()
    try:
        with server.client(token) as http:
            for _ in range(10):  # more than the pool's 8 connections: each one was given back
                answer = http.post("/v1/records/search", json=SLOWEST)
                assert answer.status_code == 503, answer.text
                assert (answer.json()["code"], answer.json()["retryable"]) == ("query_timeout", True)
                assert int(answer.headers["Retry-After"]) > 0
            fine = http.post("/v1/records/search", json={"labels": ["TASK"], "where": {"p0": "w0"}, "limit": 1})
            assert fine.status_code == 200 and fine.json()["records"]  # the pool serves the next request
        assert _active_statements(pg_url) == []  # and nothing of the cancelled searches still runs
        assert _all_idle(store)  # no connection is held by one (the jobs' come back between their polls)
        with store._pool.connection():  # the positive control: a connection held is seen
            assert not _all_idle(store, tries=20)
    finally:
        server.stop()  # and closes the store


def _all_idle(store: PostgresStore, tries: int = 500) -> bool:
    """True once every pooled connection is back in the pool at the same moment (polled)."""
    for _ in range(tries):
        stats = store._pool.get_stats()
        if stats["pool_available"] == stats["pool_size"] > 0:
            return True
        time.sleep(0.01)
    return False
