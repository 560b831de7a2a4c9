"""A key is checked on the event loop only where that read is local and its tenant is open already:
never opening a tenant (its migrations) there, never a PostgreSQL round trip; and what it reads is
the key as stored now, so a revoke by another process is refused on the next request."""

from __future__ import annotations

from pathlib import Path

import pytest

from engramdb.config import Settings
from engramdb.core import auth
from engramdb.core.embedding import HashingEmbedder
from engramdb.errors import AuthenticationError
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import scope_fields
from tests.pg_schemas import SchemaPool

GRANT = scope_fields()


def test_an_open_sqlite_tenants_key_is_checked_at_once_and_a_closed_one_is_left_to_a_thread(tmp_path: Path) -> None:
    made = SQLiteStore(tmp_path / "home")
    token, _ = auth.create_key(made, tenant="t1", role="agent", grant=GRANT, create_tenant=True)
    made.close()
    store = SQLiteStore(tmp_path / "home")
    try:
        assert store.opened("t1") is None
        assert auth.authenticate_at_once(store, token) is None  # not open: the thread opens it ...
        assert store.opened("t1") is None  # ... and this did not
        assert auth.authenticate(store, token).tenant == "t1"  # the thread's check opens it
        caller = auth.authenticate_at_once(store, token)
        assert caller is not None and (caller.tenant, caller.role, caller.grant) == ("t1", "agent", GRANT)
        with pytest.raises(AuthenticationError, match="unknown key"):
            auth.authenticate_at_once(store, token[:-2] + "xx")
        assert auth.authenticate_at_once(store, "egm.nobody.k.s") is None  # an unknown tenant: the thread says
        assert auth.authenticate_at_once(store, "not a token") is None
    finally:
        store.close()
    assert store.opened("t1") is None  # a closed store has nothing open


@pytest.mark.postgres
def test_a_postgresql_key_is_always_left_to_a_thread(schema_pool: SchemaPool) -> None:
    store = schema_pool.open()
    try:
        token, _ = auth.create_key(store, tenant="t1", role="agent", grant=GRANT, create_tenant=True)
        assert auth.authenticate(store, token).tenant == "t1"  # the tenant is open, and the key is good
        assert store.opened("t1") is None and auth.authenticate_at_once(store, token) is None
    finally:
        store.close()
        schema_pool.give_back(store.schema)


def test_a_key_revoked_by_another_process_is_refused_on_the_next_request(settings: Settings) -> None:
    server = LiveServer(settings, SQLiteStore(settings.home), HashingEmbedder())
    server.start()
    try:
        token = server.key(role="reviewer")
        with server.client(token) as http:
            assert http.get("/v1/review").status_code == 200  # the control: checked at once, the tenant open
            assert server.store.opened("t1") is not None
            other = SQLiteStore(settings.home)  # as `engram keys revoke` in another process
            try:
                assert auth.revoke_key(other, tenant="t1", key_id=token.split(".")[2])
            finally:
                other.close()
            refused = http.get("/v1/review")
            assert refused.status_code == 401 and "revoked" in refused.text
    finally:
        server.stop()
        server.store.close()
