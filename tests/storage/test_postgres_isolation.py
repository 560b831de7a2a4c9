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
