"""An index migration on a large table lets the server's writes through while it builds (PostgreSQL).

A plain ``CREATE INDEX`` asks for a lock that every later write to its table queues behind, from the
moment it waits until its build ends; a ``CONCURRENTLY`` build does not (storage/postgres/migrating.py).
Here a transaction holds a write's lock on ``record_values`` while migration 027 runs; another write then
comes, with a lock timeout. Migration 027 in place of the real size test: ``small_table_bytes=-1``
builds concurrently, a large limit builds in the transaction (the control, where the write times out).
And a concurrent build cut short leaves an invalid index, which the next attempt builds again.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from importlib import resources

import psycopg
import pytest

from engramdb.storage.postgres import migrating
from engramdb.storage.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres
NAME = "027_record_values_catalog.sql"
TEXT = resources.files("engramdb.storage.postgres.migrations").joinpath(NAME).read_text()


@pytest.fixture
def schema(pg_url: str) -> Iterator[str]:
    """A migrated schema without migration 027 (its index dropped, its record gone)."""
    store = PostgresStore(pg_url, schema=f"mig_{uuid.uuid4().hex[:10]}")
    store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX {store.schema}.record_values_catalog")
        conn.execute(f"DELETE FROM {store.schema}.schema_migrations WHERE name = %s", (NAME,))
    yield store.schema
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {store.schema} CASCADE")


def _valid(conn: psycopg.Connection, schema: str) -> bool | None:
    row = conn.execute(
        "SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(%s)", (f"{schema}.record_values_catalog",)
    ).fetchone()
    return None if row is None else bool(row[0])


@pytest.mark.parametrize("concurrently", [True, False], ids=["concurrently", "control-in-a-transaction"])
def test_a_write_goes_through_while_the_index_waits_to_build(pg_url: str, schema: str, concurrently: bool) -> None:
    table = f"{schema}.record_values"
    with psycopg.connect(pg_url) as holder, psycopg.connect(pg_url, autocommit=True) as migrator:
        holder.execute(f"LOCK TABLE {table} IN ROW EXCLUSIVE MODE")  # a write in flight, not committed yet
        limit = -1 if concurrently else 2**62
        failed: list[BaseException] = []

        def migrate() -> None:
            try:
                migrating.apply(migrator, schema, NAME, TEXT, small_table_bytes=limit)
            except BaseException as error:  # reported below
                failed.append(error)

        thread = threading.Thread(target=migrate)
        thread.start()
        try:
            _wait_until_it_waits(pg_url, migrator.info.backend_pid)
            with psycopg.connect(pg_url) as writer:  # the next write, with a lock timeout
                writer.execute("SET lock_timeout = '2s'")
                if concurrently:
                    writer.execute(f"LOCK TABLE {table} IN ROW EXCLUSIVE MODE")  # granted
                else:
                    with pytest.raises(psycopg.errors.LockNotAvailable):
                        writer.execute(f"LOCK TABLE {table} IN ROW EXCLUSIVE MODE")  # queued behind the build
        finally:
            holder.rollback()
            thread.join(60)
        assert not thread.is_alive() and not failed, failed
        assert _valid(migrator, schema) is True
        assert migrator.execute(f"SELECT 1 FROM {schema}.schema_migrations WHERE name = %s", (NAME,)).fetchone()


def _wait_until_it_waits(pg_url: str, pid: int) -> None:
    """Until the migration's connection waits for a lock (the holder's transaction)."""
    with psycopg.connect(pg_url, autocommit=True) as watcher:
        for _ in range(600):
            row = watcher.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
            if row and row[0] == "Lock":
                return
            time.sleep(0.05)
    raise AssertionError("the migration never waited for the holder's lock")


@pytest.mark.parametrize("limit", [-1, 2**62], ids=["concurrently", "in-a-transaction"])
def test_an_index_a_build_left_invalid_is_built_again(pg_url: str, schema: str, limit: int) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(TEXT.replace("{schema}", schema).replace("CONCURRENTLY ", ""))
        conn.execute(  # what a build cut short leaves (a superuser may say so)
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass(%s)",
            (f"{schema}.record_values_catalog",),
        )
        assert _valid(conn, schema) is False
        migrating.apply(conn, schema, NAME, TEXT, small_table_bytes=limit)
        assert _valid(conn, schema) is True  # IF NOT EXISTS alone would have kept the invalid one


def test_two_servers_starting_at_once_take_turns_while_one_builds_concurrently(
    pg_url: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second waits for the migration lock while the first's concurrent build waits for older
    snapshots; a waiting statement is one (the review's script: a deadlock, and the first failed to start)."""
    monkeypatch.setattr(migrating, "SMALL_TABLE_BYTES", -1)  # every index build concurrent
    failed: list[BaseException] = []

    def start() -> None:
        try:
            PostgresStore(pg_url, schema=schema).close()
        except BaseException as error:  # reported below
            failed.append(error)

    with psycopg.connect(pg_url) as holder, psycopg.connect(pg_url, autocommit=True) as watcher:
        holder.execute(f"LOCK TABLE {schema}.record_values IN ROW EXCLUSIVE MODE")  # keeps the first build waiting
        first, second = threading.Thread(target=start), threading.Thread(target=start)
        first.start()
        _wait_for(watcher, "query ILIKE 'CREATE INDEX CONCURRENTLY%%' AND wait_event_type = 'Lock'")
        second.start()
        _wait_for(
            watcher, "query ILIKE '%%advisory_lock(hashtext(''engramdb-migrations''))%%'"
        )  # it asked for its turn
        holder.rollback()
        first.join(120)
        second.join(120)
        assert not first.is_alive() and not second.is_alive() and not failed, failed
        assert _valid(watcher, schema) is True


def _wait_for(watcher: psycopg.Connection, condition: str) -> None:
    for _ in range(600):
        if watcher.execute(f"SELECT 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND {condition}").fetchone():
            return
        time.sleep(0.05)
    raise AssertionError(f"no session came to: {condition}")


def test_a_migration_that_builds_concurrently_builds_only_indexes() -> None:
    """Outside a transaction a file runs statement by statement: one that mixed other statements with
    concurrent builds would run whole in a transaction, which PostgreSQL refuses for CONCURRENTLY."""
    folder = resources.files("engramdb.storage.postgres.migrations")
    texts = {e.name: e.read_text() for e in folder.iterdir() if e.name.endswith(".sql")}
    concurrent = {name for name, text in texts.items() if "CONCURRENTLY" in text.upper()}
    assert {"026_slot_starts_and_ends.sql", NAME} <= concurrent  # the positive control: they are found
    assert {name: len(migrating.concurrent_builds(texts[name].replace("{schema}", "s"))) for name in concurrent} == {
        "026_slot_starts_and_ends.sql": 2,
        NAME: 1,
    }


def test_a_server_waiting_for_its_migration_turn_says_so_and_goes_on_when_it_comes(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with psycopg.connect(pg_url, autocommit=True) as holder, psycopg.connect(pg_url, autocommit=True) as waiter:
        migrating.take_lock(holder)  # another server migrating
        taken = threading.Event()

        def wait() -> None:
            migrating.take_lock(waiter, poll_seconds=0.05)
            taken.set()

        with caplog.at_level("INFO", logger="engramdb.storage.postgres.migrating"):
            thread = threading.Thread(target=wait)
            thread.start()
            for _ in range(200):  # until it said it waits (its first refused turn)
                if "waiting for another server's migration" in caplog.text:
                    break
                time.sleep(0.05)
            assert not taken.is_set()  # the positive control of the wait: the holder still has it
            migrating.release_lock(holder)
            thread.join(30)
        assert taken.is_set() and "waiting for another server's migration" in caplog.text
        migrating.release_lock(waiter)


def test_a_concurrent_build_is_not_cut_short_by_the_sessions_statement_timeout(pg_url: str, schema: str) -> None:
    """The build waits for a write in flight longer than the session's statement timeout allows a statement,
    and completes; the session keeps its timeout for what follows."""
    with psycopg.connect(pg_url) as holder, psycopg.connect(pg_url, autocommit=True) as migrator:
        migrator.execute("SET statement_timeout = '300ms'")
        holder.execute(f"LOCK TABLE {schema}.record_values IN ROW EXCLUSIVE MODE")
        failed: list[BaseException] = []

        def migrate() -> None:
            try:
                migrating.apply(migrator, schema, NAME, TEXT, small_table_bytes=-1)
            except BaseException as error:  # reported below
                failed.append(error)

        thread = threading.Thread(target=migrate)
        thread.start()
        _wait_until_it_waits(pg_url, migrator.info.backend_pid)
        time.sleep(0.6)  # twice the timeout: a statement under it would have been cancelled by now
        assert thread.is_alive()  # still waiting for the holder, not cancelled
        holder.rollback()
        thread.join(60)
        assert not failed, failed
        assert _valid(migrator, schema) is True
        assert migrator.execute("SHOW statement_timeout").fetchone() == ("300ms",)
