"""``userId`` names the participant in every operation whose body names a scope (issue 30).

Eleven operations ignored it (records, relationships, extraction, reflection, consolidation, marks,
restores): a host key was asked for participantScopeHash, and a key bound to alice that named bob
acted in alice's scope. Every such operation is walked here from the registry, so a new one is
covered the day it is declared.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from engramdb.contract.events import ScopeFields
from engramdb.core import auth
from engramdb.models.operation import Operation
from engramdb.models.operations import OPERATIONS
from tests.conftest import LiveServer
from tests.surfaces.requests import example_request

SCOPE_FIELDS = {"agentId", "profileId", "privacyScope", "participantScopeHash", "sandboxEligible", "userId"}
HOST_GRANT = {"agentId": "coder", "profileId": "default"}
NAMED = {"privacyScope": "private", "sandboxEligible": False}
# Past the scope, an example may still be refused for its own reasons: an id that names nothing (404),
# a state that does not allow it (409), a value it does not take (422), no chat model here (501).
OK = {200, 201, 204, 404, 409, 422, 501}


def _scoped_operations() -> list[Operation[Any]]:
    return [op for op in OPERATIONS if op.body is not None and _where_scope(op) is not None]


def _where_scope(op: Operation[Any]) -> str | None:
    """Where ``op``'s body names its scope: in ``scope``, at the top level, or nowhere."""
    assert op.body is not None
    if "scope" in op.body.model_fields:
        return "nested"
    return "top" if issubclass(op.body, ScopeFields) else None


def _request(op: Operation[Any], user_id: str, also: dict[str, Any] | None = None) -> dict[str, Any]:
    """The operation's example request naming ``user_id`` (and ``also``'s scope fields)."""
    request = example_request(op)
    body = {k: v for k, v in (request.get("json") or {}).items() if k not in SCOPE_FIELDS}
    named = {**NAMED, **(also or {}), "userId": user_id}
    request["json"] = {**body, "scope": named} if _where_scope(op) == "nested" else {**body, **named}
    return request


def _role(op: Operation[Any]) -> str:
    assert op.permission is not None
    return next(r for r in ("agent", "host", "reviewer") if r in auth.PERMISSIONS[op.permission].roles)


def _outcome(answer: httpx.Response) -> tuple[int, dict[str, Any]]:
    """The status and body that answer the request's item: a batch answers each item in ``results``."""
    body = answer.json() if answer.content else {}
    if answer.status_code == 200 and isinstance(body.get("results"), list):
        return int(body["results"][0]["status"]), body["results"][0]
    return answer.status_code, body


def _scope_refusal(answer: httpx.Response) -> str | None:
    """The scope field a 403 or 422 names, if the answer refused the request's scope."""
    status, body = _outcome(answer)
    if status in (403, 422) and body.get("field") in SCOPE_FIELDS:
        return str(body["field"])
    return None


def test_every_scoped_operation_reads_user_id(server: LiveServer) -> None:
    scoped = _scoped_operations()
    assert {"write_records", "search_records", "extract", "reflect", "mark_fact", "restore_fact"} <= {
        op.name for op in scoped
    }  # the walk found the operations the attack named
    with server.client(server.key(role="host", **HOST_GRANT)) as host:
        alice = host.post("/v1/scope/resolve", json={**NAMED, "userId": "alice"}).json()["participantScopeHash"]
    bound_grant = {**HOST_GRANT, **NAMED, "participantScopeHash": alice}
    for op in scoped:
        role = _role(op)
        if role == "reviewer":  # reviewer keys take no grant (a bound one is refused): none can name another user
            with server.client(server.key(role="reviewer")) as reviewer:
                named = reviewer.request(**_request(op, "bob", HOST_GRANT))
                assert _scope_refusal(named) is None and named.status_code in OK, (op.name, named.text)
            continue
        bound = server.client(server.key(role=role, **bound_grant))
        open_ = server.client(server.key(role="host", **HOST_GRANT))
        with bound, open_:
            bob_as_alice = bound.request(**_request(op, "bob"))
            assert _outcome(bob_as_alice)[0] == 403, (op.name, bob_as_alice.text)
            assert _scope_refusal(bob_as_alice) == "participantScopeHash", (op.name, bob_as_alice.text)
            as_alice = bound.request(**_request(op, "alice"))  # control: the key's own user is no breach
            assert _scope_refusal(as_alice) is None and as_alice.status_code in OK, (op.name, as_alice.text)
            named = open_.request(**_request(op, "bob"))
            assert _scope_refusal(named) is None and named.status_code in OK, (op.name, named.text)


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the scope is resolved before any store is asked; the service tests run on both
