"""A key revoked after its request was authenticated (while the request waited for a worker thread or
a recall-lane place, say) could still write: the key was checked only as the request came in. It is
checked again in the write itself, so nothing the revoked key sends lands, on both backends."""

from __future__ import annotations

import pytest

from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.errors import AuthenticationError
from engramdb.models.memories import FactQuery
from engramdb.storage.port import Store
from tests.factories import episode_body, fact_body, scope_fields

SCOPE = scope_fields()


def _agent(store: Store) -> Caller:
    token, _ = auth.create_key(store, tenant="t1", role="agent", grant=SCOPE, create_tenant=True)
    return auth.authenticate(store, token)


def _facts(service: MemoryService, operator: Caller) -> list[str]:
    listed = service.reads.list_facts(operator, FactQuery.model_validate({**SCOPE, "limit": 100}))
    return [f.event["text"] for f in listed.facts]


def test_a_key_revoked_in_flight_writes_nothing(store: Store, service: MemoryService) -> None:
    kept, revoked = _agent(store), _agent(store)  # both authenticated, as requests that came in
    assert auth.revoke_key(store, tenant="t1", key_id=revoked.key_id)  # then one key is revoked
    operator = Caller(tenant="t1", key_id="test-operator", role="admin")

    with pytest.raises(AuthenticationError, match="revoked"):
        service.writes.write_fact(revoked, FactWrite.model_validate(fact_body("I live in Oslo.", kind="city")))
    with pytest.raises(AuthenticationError, match="revoked"):
        service.writes.write_episode(revoked, EpisodeWrite.model_validate(episode_body("from a revoked key")))
    # The control: the key still active writes as before, through the same path.
    service.writes.write_fact(kept, FactWrite.model_validate(fact_body("I live in Rome.", kind="city")))
    assert _facts(service, operator) == ["I live in Rome."]
    actors = [e.actor_key_id for e in store.tenant("t1").audit_entries(0, 100)]
    assert revoked.key_id not in actors and kept.key_id in actors  # no entry of the refused writes


def test_a_key_may_still_revoke_itself(store: Store) -> None:
    admin_token, _ = auth.create_key(store, tenant="t1", role="admin", grant={}, create_tenant=True)
    auth.create_key(store, tenant="t1", role="admin", grant={})  # not the last admin key
    admin = auth.authenticate(store, admin_token)
    assert auth.revoke_key(store, tenant="t1", key_id=admin.key_id, actor=admin)  # its own revoke is written
    with pytest.raises(AuthenticationError, match="revoked"):
        auth.authenticate(store, admin_token)
