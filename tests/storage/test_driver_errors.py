"""Driver failures leave both stores as the same EngramDB errors, with no driver text in them.

Each condition is produced for real on each backend: a unique violation, a lock held by another
connection (with a short wait), a server or file that cannot be reached, and a table renamed
away under a live store. Every "absent" assertion stands beside a positive control: the chained
driver error did carry the text (and the code) that must not reach a client.
"""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from engramdb.errors import BackendUnavailableError, ConflictError, EngramError, InternalError
from engramdb.storage.port import (
    AuditDraft,
    CandidateFilter,
    KeyRecord,
    NewMemory,
    ScopeColumns,
    Store,
    TenantStore,
    Tombstone,
)
from engramdb.storage.postgres.store import PostgresStore
from engramdb.storage.sqlite.store import SQLiteStore

SCOPE = ScopeColumns("s" * 64, "coder", "default", "private", "p" * 64, False)
AT = "2026-01-01T00:00:00.000000Z"
ADMIN = AuditDraft(action="policy.set", actor_key_id=None, actor_role="admin")
EXPECTED: dict[type[EngramError], tuple[str, int, bool]] = {
    ConflictError: ("conflict", 409, False),
    BackendUnavailableError: ("backend_unavailable", 503, True),
    InternalError: ("internal", 500, False),
}


def _tombstone(tombstone_id: str, value_hash: str) -> Tombstone:
    return Tombstone(tombstone_id, SCOPE.scope_key, "user.editor", "editor", value_hash, None, "r", AT)


def _memory(memory_id: str = "fact-1") -> NewMemory:
    return NewMemory(
        source="MEMORY_FACT",
        memory_id=memory_id,
        scope=SCOPE,
        text="Uses vim",
        embed_text="Uses vim",
        trust_class="trusted",
        origin="stated",
        status="active",
        confidence=1.0,
        observed_at=AT,
        recorded_at=AT,
        event_json="{}",
        subject_key="user.editor",
        kind="editor",
    )


def _tenant(store: Store) -> TenantStore:
    tenant = store.tenant("t1", create=True)
    with tenant.transaction() as tx:
        tx.insert_memory(_memory())
        tx.add_tombstone(_tombstone("tomb-1", "a" * 64))
    return tenant


def assert_translated(error: EngramError, expected: type[EngramError], *driver_words: str) -> None:
    """The error is ``expected`` with its code, status and retryability, chained to the driver's
    error, and neither its message nor its body holds any of the driver's words."""
    assert type(error) is expected
    assert (error.code, error.http_status, error.retryable) == EXPECTED[expected]
    cause = error.__cause__
    assert isinstance(cause, (sqlite3.Error, psycopg.Error))  # chained: the traceback reaches the log
    driver_text = str(cause)
    body = json.dumps(error.to_dict())
    for word in (*driver_words, driver_text):
        assert word in driver_text  # positive control: the driver did say it
        assert word not in body and word not in error.message
    assert set(error.to_dict()) == {"code", "message"}  # no context: no sqlite_code, no sqlstate
    assert "sqlite_code" not in body and "sqlstate" not in body


def _driver_code(error: EngramError) -> object:
    """The code the driver gave (SQLite's extended result code, PostgreSQL's SQLSTATE)."""
    return getattr(error.__cause__, "sqlite_errorcode", None) or getattr(error.__cause__, "sqlstate", None)


def _postgres(store: Store) -> PostgresStore:
    assert isinstance(store, PostgresStore)
    return store


def _raise(action: Callable[[], object]) -> EngramError:
    with pytest.raises(EngramError) as info:
        action()
    return info.value


# -- a unique violation -------------------------------------------------------------------


def _same_tombstone_id_twice(tenant: TenantStore) -> None:
    with tenant.transaction() as tx:
        tx.add_tombstone(_tombstone("tomb-1", "b" * 64))  # another value under a taken id


def _import_the_same_memory_twice(tenant: TenantStore, store: Store) -> None:
    rows = [(table, row) for table, row in tenant.export_rows() if table == "memories"]
    store.tenant("t2", create=True).import_rows(rows + rows)


@pytest.mark.parametrize("path", ["transaction", "import"])
def test_a_unique_violation_is_a_conflict(store: Store, backend: str, path: str) -> None:
    tenant = _tenant(store)
    if path == "transaction":
        error = _raise(lambda: _same_tombstone_id_twice(tenant))
        words = ("UNIQUE constraint failed", "tombstones") if backend == "sqlite" else ("duplicate key", "tombstones")
    else:
        error = _raise(lambda: _import_the_same_memory_twice(tenant, store))
        words = ("UNIQUE constraint failed", "memories") if backend == "sqlite" else ("duplicate key", "memories")
    assert_translated(error, ConflictError, *words)
    assert _driver_code(error) in (sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE, "23505")
    assert [
        t.tombstone_id for t in tenant.tombstones(SCOPE.scope_key, subject_key=None, kind=None, include_lifted=True)
    ] == ["tomb-1"]


def test_creating_a_key_twice_is_the_same_conflict_on_both_backends(store: Store) -> None:
    tenant = store.tenant("t1", create=True)
    key = KeyRecord("key-1", "agent", "{}", "h" * 64, AT)
    tenant.create_key(key, ADMIN)
    error = _raise(lambda: tenant.create_key(key, ADMIN))
    assert type(error) is ConflictError
    assert error.to_dict() == {"code": "conflict", "message": "key id key-1 exists", "field": "keyId"}
    assert [k.key_id for k in tenant.list_keys()] == ["key-1"]


# -- a lock another connection holds ----------------------------------------------------------


@contextmanager
def _write_lock_held(store: Store) -> Iterator[Store]:
    """Hold the tenant's write lock from another connection; yield a store that waits briefly."""
    if isinstance(store, SQLiteStore):
        waiting: Store = SQLiteStore(store.home, busy_timeout=0.05)
        waiting.tenant("t1")
        with sqlite3.connect(store.tenant("t1").path, isolation_level=None) as holder:
            holder.execute("BEGIN IMMEDIATE")
            try:
                yield waiting
            finally:
                holder.execute("ROLLBACK")
                waiting.close()
        return
    url, schema = _postgres(store).url, _postgres(store).schema
    waiting = PostgresStore(make_conninfo(url, options="-c lock_timeout=100"), schema=schema)
    waiting.tenant("t1")
    with psycopg.connect(url) as holder:
        holder.execute(f"LOCK TABLE {schema}.meta, {schema}.memories IN EXCLUSIVE MODE")
        try:
            yield waiting
        finally:
            holder.rollback()
            waiting.close()


@pytest.mark.parametrize("operation", ["write", "maintain"])
def test_a_lock_held_elsewhere_is_backend_unavailable(store: Store, backend: str, operation: str) -> None:
    _tenant(store)
    with _write_lock_held(store) as waiting:
        if operation == "write":
            error = _raise(lambda: waiting.tenant("t1").set_policy("{}", ADMIN))
        else:
            error = _raise(waiting.maintain)
    words = ("database is locked",) if backend == "sqlite" else ("lock timeout",)
    assert_translated(error, BackendUnavailableError, *words)
    assert _driver_code(error) in (sqlite3.SQLITE_BUSY, "55P03")
    store.tenant("t1").set_policy('{"after": true}', ADMIN)  # once the lock is gone, the same write works
    assert store.tenant("t1").get_policy() == '{"after": true}'


# -- a database that cannot be reached --------------------------------------------------------


def test_an_unreachable_database_is_backend_unavailable(backend: str, tmp_path: Path) -> None:
    if backend == "sqlite":
        (tmp_path / "tenants" / "t1.sqlite3").mkdir(parents=True)  # where the file should be
        error = _raise(lambda: SQLiteStore(tmp_path).tenant("t1"))
        assert_translated(error, BackendUnavailableError, "unable to open database file")
        assert _driver_code(error) == sqlite3.SQLITE_CANTOPEN
        return
    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    error = _raise(lambda: PostgresStore(f"postgresql://engram@127.0.0.1:{port}/engram", schema="gone"))
    assert_translated(error, BackendUnavailableError, "127.0.0.1", str(port))
    assert isinstance(error.__cause__, psycopg.OperationalError) and error.__cause__.sqlstate is None


# -- any other failure: a table renamed away under a live store -----------------------------


def _rename(store: Store, table: str) -> None:
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.tenant("t1").path) as conn:
            conn.execute(f"ALTER TABLE {table} RENAME TO {table}_gone")
        return
    schema = _postgres(store).schema
    with psycopg.connect(_postgres(store).url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {schema}.{table} RENAME TO {table}_gone")


def _list_tombstones(tenant: TenantStore) -> object:
    return tenant.tombstones(SCOPE.scope_key, subject_key=None, kind=None, include_lifted=True)


def _list_tombstones_in_a_reading_block(tenant: TenantStore) -> object:
    with tenant.reading():
        return _list_tombstones(tenant)


def _write_a_tombstone(tenant: TenantStore) -> object:
    with tenant.transaction() as tx:
        return tx.add_tombstone(_tombstone("tomb-2", "c" * 64))


def _search(tenant: TenantStore) -> object:
    return tenant.text_candidates(SCOPE.scope_key, ["vim"], CandidateFilter(), 5)


def _export(tenant: TenantStore) -> object:
    return list(tenant.export_rows())


# path -> (the table renamed on SQLite, on PostgreSQL; the call that then fails)
OTHER_FAILURES: dict[str, tuple[str, str, Callable[[TenantStore], object]]] = {
    "read": ("tombstones", "tombstones", _list_tombstones),
    "read in a reading block": ("tombstones", "tombstones", _list_tombstones_in_a_reading_block),
    "write": ("tombstones", "tombstones", _write_a_tombstone),
    # SQLite searches its in-memory scope copy, which first reads the tenant's change counter.
    "search": ("meta", "memories", _search),
    "export": ("audit_log", "audit_log", _export),
}


@pytest.mark.parametrize("path", list(OTHER_FAILURES))
def test_any_other_driver_failure_is_internal(store: Store, backend: str, path: str) -> None:
    sqlite_table, postgres_table, action = OTHER_FAILURES[path]
    table = sqlite_table if backend == "sqlite" else postgres_table
    tenant = _tenant(store)
    action(tenant)  # positive control: the same call works while the table is there
    _rename(store, table)
    error = _raise(lambda: action(tenant))
    missing = "no such table" if backend == "sqlite" else "does not exist"
    assert_translated(error, InternalError, missing, table)
    assert _driver_code(error) in (sqlite3.SQLITE_ERROR, "42P01")


def _forget_migration_005(store: Store) -> None:
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.tenant("t1").path) as conn:
            conn.execute("DROP INDEX memories_by_observed")
        return
    schema = _postgres(store).schema
    with psycopg.connect(_postgres(store).url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX {schema}.memories_by_observed")
        conn.execute(f"DELETE FROM {schema}.schema_migrations WHERE name = '005_episodes_by_observed.sql'")


def _reopen(store: Store) -> Store:
    if isinstance(store, SQLiteStore):
        reopened: Store = SQLiteStore(store.home)
        reopened.tenant("t1")
        return reopened
    return PostgresStore(_postgres(store).url, schema=_postgres(store).schema)


def test_a_failing_migration_is_internal(store: Store, backend: str) -> None:
    """An upgrade that meets a schema it cannot change fails as InternalError, on both backends."""
    _tenant(store)
    _forget_migration_005(store)
    _reopen(store).close()  # positive control: the upgrade runs and succeeds
    _forget_migration_005(store)
    _rename(store, "memories")
    error = _raise(lambda: _reopen(store))
    missing = "no such table" if backend == "sqlite" else "does not exist"
    assert_translated(error, InternalError, missing, "memories")
