"""The tests' PostgreSQL schemas are used again (tests/pg_schemas.py): a schema given back is as a
fresh one is, empty with its sequences at their start, and one a test changed or still holds is
never handed out again."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.storage.postgres.store import MIGRATIONS, PostgresStore
from tests.factories import episode_body, fact_body, scope_fields
from tests.pg_schemas import TABLES, SchemaPool

pytestmark = pytest.mark.postgres


def _opened(pool: SchemaPool) -> tuple[PostgresStore, bool]:
    """A store of the pool, and whether its schema is new (no schema of this pool had it before)."""
    before = set(pool._shapes)
    store = pool.open()
    return store, store.schema not in before


def _rows(url: str, schema: str) -> dict[str, int]:
    with psycopg.connect(url, autocommit=True) as conn:
        tables = [t for (t,) in conn.execute(TABLES, (schema,)).fetchall()]
        return {t: conn.execute(f'SELECT count(*) FROM {schema}."{t}"').fetchone()[0] for t in tables}  # type: ignore[index]


def _first_rowid(store: PostgresStore) -> int:
    with psycopg.connect(store.url, autocommit=True) as conn:
        row = conn.execute(f"SELECT min(rowid) FROM {store.schema}.memories").fetchone()
    assert row is not None
    return int(row[0])


def _write(store: PostgresStore, tmp_path: Path) -> None:
    service = MemoryService(store, HashingEmbedder(), Settings(home=tmp_path / "home", embedder="hashing"))
    store.tenant("t1", create=True)
    operator = Caller(tenant="t1", key_id="test-operator", role="admin")
    service.writes.write_episode(
        operator, EpisodeWrite.model_validate(episode_body("Staging is in Frankfurt.", scope=scope_fields()))
    )
    service.writes.write_fact(
        operator, FactWrite.model_validate(fact_body("I prefer tea.", kind="drink", scope=scope_fields()))
    )


def test_a_schema_given_back_is_empty_and_its_sequences_start_again(pg_url: str, tmp_path: Path) -> None:
    pool = SchemaPool(pg_url)
    store, fresh = _opened(pool)
    assert fresh
    _write(store, tmp_path)
    first = _first_rowid(store)
    used = _rows(pg_url, store.schema)
    assert used["memories"] >= 2 and used["audit_log"] >= 2 and used["tenants"] == 1  # positive control
    store.close()
    pool.give_back(store.schema)

    again, fresh = _opened(pool)
    assert (again.schema, fresh) == (store.schema, False)  # the same schema, handed out again
    assert {t: n for t, n in _rows(pg_url, again.schema).items() if n} == {"schema_migrations": len(MIGRATIONS)}
    _write(again, tmp_path)
    assert _first_rowid(again) == first  # numbered from the start, as in a fresh schema
    again.close()


def test_a_schema_whose_shape_changed_is_dropped_not_used_again(pg_url: str) -> None:
    pool = SchemaPool(pg_url)
    store, _ = _opened(pool)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {store.schema}.memories ADD COLUMN leftover TEXT")
    store.close()
    pool.give_back(store.schema)
    again, fresh = _opened(pool)
    assert fresh and again.schema != store.schema
    with psycopg.connect(pg_url, autocommit=True) as conn:
        gone = conn.execute("SELECT to_regnamespace(%s) IS NULL", (store.schema,)).fetchone()
        kept = conn.execute("SELECT to_regnamespace(%s) IS NULL", (again.schema,)).fetchone()
    assert gone == (True,) and kept == (False,)  # the positive control: the new one exists
    again.close()


def test_a_schema_still_held_by_a_transaction_is_not_used_again(pg_url: str) -> None:
    pool = SchemaPool(pg_url)
    store, _ = _opened(pool)
    store.close()
    with psycopg.connect(pg_url) as holder:  # a transaction left open on one of its tables
        holder.execute(f"LOCK TABLE {store.schema}.memories IN ACCESS EXCLUSIVE MODE")
        pool.give_back(store.schema)
        again, fresh = _opened(pool)
        assert fresh and again.schema != store.schema
        again.close()


def test_a_fresh_schema_is_a_new_one_even_when_an_emptied_one_is_free(pg_url: str, tmp_path: Path) -> None:
    """An emptied schema keeps its deleted rows' index pages, which PostgreSQL's plans weigh; a plan
    check asks for a new schema (``fresh``, the ``fresh_schema`` marker)."""
    pool = SchemaPool(pg_url)
    store, _ = _opened(pool)
    _write(store, tmp_path)
    store.close()
    pool.give_back(store.schema)
    new = pool.open(fresh=True)
    assert new.schema != store.schema and store.schema in pool._free  # a new one, the emptied one left free
    assert _index_bytes(pg_url, store.schema) > _index_bytes(pg_url, new.schema)  # emptied is not new
    new.close()
    again, fresh = _opened(pool)
    assert (again.schema, fresh) == (store.schema, False)  # the control: unasked, the emptied one is handed out
    again.close()


def _index_bytes(url: str, schema: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT pg_relation_size(%s::regclass)", (f"{schema}.memories_pkey",)).fetchone()
    assert row is not None
    return int(row[0])


def _store_after_one_is_given_back(schema_pool: SchemaPool, request: pytest.FixtureRequest) -> tuple[str, str]:
    """The emptied schema left free in the session's pool, and the schema the ``store`` fixture then took."""
    assert request.getfixturevalue("backend") == "postgres"
    spare = schema_pool.open()
    spare.close()
    schema_pool.give_back(spare.schema)
    assert spare.schema in schema_pool._free
    store = request.getfixturevalue("store")
    assert isinstance(store, PostgresStore)
    return spare.schema, store.schema


@pytest.mark.fresh_schema
@pytest.mark.parametrize("backend", ["postgres"])
def test_the_marker_gives_the_store_fixture_a_new_schema(
    backend: str, schema_pool: SchemaPool, request: pytest.FixtureRequest
) -> None:
    spare, taken = _store_after_one_is_given_back(schema_pool, request)
    assert taken != spare and spare in schema_pool._free


@pytest.mark.parametrize("backend", ["postgres"])
def test_unmarked_the_store_fixture_takes_the_emptied_one(
    backend: str, schema_pool: SchemaPool, request: pytest.FixtureRequest
) -> None:
    spare, taken = _store_after_one_is_given_back(schema_pool, request)
    assert taken == spare  # the control of the marker's test
