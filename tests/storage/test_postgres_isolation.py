"""The database itself keeps tenants apart: row-level security, not only the queries we write."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from engramdb.config import Settings
from engramdb.contract.writes import FactWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.errors import ConflictError
from engramdb.storage.postgres import store as store_module
from engramdb.storage.postgres.store import PostgresStore
from tests.factories import fact_body, scope_fields

pytestmark = pytest.mark.postgres
SCOPE = scope_fields()


@pytest.fixture
def pg(pg_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(pg_url, schema=f"iso_{uuid.uuid4().hex[:10]}")
    service = MemoryService(store, HashingEmbedder(), Settings(embedder="hashing"))
    for tenant in ("alpha", "beta"):
        store.tenant(tenant, create=True)
        service.writes.write_fact(
            Caller(tenant, "op", "admin"), FactWrite.model_validate(fact_body(f"secret of {tenant}", scope=SCOPE))
        )
    yield store
    store.close()


def _app_connection(store: PostgresStore, tenant: str | None) -> psycopg.Connection:
    conn = psycopg.connect(store.url, autocommit=True)
    conn.execute("SET ROLE engram_app")
    conn.execute(f"SET search_path TO {store.schema}")
    if tenant is not None:
        conn.execute("SELECT set_config('engram.tenant', %s, false)", (tenant,))
    return conn


def test_a_tenant_session_cannot_read_another_tenants_rows(pg: PostgresStore) -> None:
    with _app_connection(pg, "alpha") as conn:
        own = conn.execute("SELECT text FROM memories WHERE tenant = 'alpha'").fetchall()
        assert own == [("secret of alpha",)]  # positive control
        named = conn.execute("SELECT text FROM memories WHERE tenant = 'beta'").fetchall()
        assert named == []  # naming B's tenant and scope does not help
        unfiltered = conn.execute("SELECT text FROM memories").fetchall()
        assert unfiltered == [("secret of alpha",)]  # a query that forgets the tenant
        for table in ("audit_log", "api_keys", "tombstones", "meta"):
            tenants = {r[0] for r in conn.execute(f"SELECT tenant FROM {table}")}
            assert tenants <= {"alpha"}, table
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO meta (tenant, key, value) VALUES ('beta', 'x', 'y')")


def test_a_session_without_a_tenant_sees_nothing(pg: PostgresStore) -> None:
    with _app_connection(pg, None) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)
    with psycopg.connect(pg.url, autocommit=True) as owner:  # control: the rows are there
        owner.execute(f"SET search_path TO {pg.schema}")
        assert owner.execute("SELECT count(*) FROM memories").fetchone() == (2,)


def test_a_reading_block_is_one_transaction_bound_to_its_tenant(pg: PostgresStore) -> None:
    """Recall's reads share one connection and one transaction (now() is the transaction's start)."""
    import time

    tenant = pg.tenant("alpha")
    with tenant.reading() as reader:
        first = reader._one("SELECT now(), current_setting('engram.tenant')")
        time.sleep(0.02)
        second = reader._one("SELECT now()")
        texts = [r[0] for r in reader._all("SELECT text FROM memories")]
    assert first[1] == "alpha" and second[0] == first[0]
    assert texts == ["secret of alpha"]  # still only its own rows
    apart = tenant._one("SELECT now()")[0]  # positive control: a new transaction
    assert apart > first[0]


def _setting(conn: psycopg.Connection) -> str | None:
    row = conn.execute("SELECT current_setting('engram.tenant', true)").fetchone()
    return None if row is None else row[0]


def test_a_unit_of_works_tenant_ends_with_it_committed_or_failed(pg: PostgresStore) -> None:
    """``BEGIN`` and the tenant go in one message; the setting is the transaction's alone."""
    with pg.connection("alpha") as committed:
        assert _setting(committed) == "alpha"  # positive control: bound inside
        committed.execute("INSERT INTO meta (tenant, key, value) VALUES ('alpha', 'kept', '1')")
    with pytest.raises(ConflictError), pg.connection("alpha") as failed:
        failed.execute("INSERT INTO meta (tenant, key, value) VALUES ('alpha', 'lost', '1')")
        failed.execute("INSERT INTO meta (tenant, key, value) VALUES ('alpha', 'kept', '2')")  # a duplicate key
    for given_back in (committed, failed):  # each unit's own connection, idle in the pool now (nobody else runs)
        assert given_back.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert _setting(given_back) in (None, "")  # nothing of alpha's is left on it (autocommit: no transaction)
    with pg.connection("alpha") as conn:
        keys = {r[0] for r in conn.execute("SELECT key FROM meta WHERE key IN ('kept', 'lost')")}
    assert keys == {"kept"}  # the failed unit rolled back whole


def test_a_tenant_name_is_quoted_as_a_literal(pg: PostgresStore) -> None:
    with pg.connection("o'brien; SELECT 1") as conn:
        assert _setting(conn) == "o'brien; SELECT 1"
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)  # no tenant of that name
    with pg.connection("alpha") as conn:  # control: a tenant's own rows
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (1,)


def test_each_unit_is_bound_to_its_own_tenant_past_the_kept_texts(
    pg: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "BEGINS_KEPT", 2)  # the kept texts are dropped every second tenant
    for tenant in ("alpha", "beta", "gamma", "alpha", "beta"):
        with pg.connection(tenant) as conn:
            assert _setting(conn) == tenant
    assert len(pg._begins) <= 2
