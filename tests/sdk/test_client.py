"""Client and AsyncClient against the real server: every endpoint, typed answers, typed errors."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.routing import APIRoute

from engramdb.errors import (
    AuthenticationError,
    AuthorizationError,
    BackendUnavailableError,
    ConflictError,
    EngramError,
    InvalidInputError,
    NotFoundError,
)
from engramdb.models.memories import WriteResponse
from engramdb.models.operations import OPERATIONS
from engramdb.models.recall import RecallResponse
from engramdb.sdk import AsyncClient, Client
from engramdb.sdk.errors import RateLimitedError, RequestTimeoutError, ServerError, TransportError
from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body
from tests.sdk.helpers import BlackHole, FaultProxy, dead_url

Run = Callable[..., Any]


def test_every_rest_route_has_a_method_on_both_clients(server: LiveServer) -> None:
    served = {
        (m, r.path)
        for r in server.app.routes
        if isinstance(r, APIRoute) and r.include_in_schema
        for m in r.methods or ()
    }
    assert {(op.method, op.path) for op in OPERATIONS} == served
    for name in (op.name for op in OPERATIONS):
        assert callable(getattr(Client, name)) and callable(getattr(AsyncClient, name)), name
        assert getattr(Client, name).__doc__ == getattr(AsyncClient, name).__doc__


def _tour(run: Run, agent: Any, admin: Any, tag: str) -> None:
    """Every endpoint once, through ``run(client, method_name, *args, **kwargs)``."""
    assert run(agent, "health").status == "ok"
    episode = episode_body(f"The staging database is in Frankfurt ({tag}).", session=f"s-{tag}")
    first = run(agent, "write_episode", episode)
    again = run(agent, "write_episode", episode)
    assert isinstance(first, WriteResponse) and first.created and not again.created and again.id == first.id
    assert run(agent, "get_episode", first.id).id == first.id

    kind = f"database-{tag}"
    old = run(agent, "write_fact", fact_body("I prefer MongoDB for backend projects.", kind=kind))
    assert run(agent, "get_fact", old.id).status == "active"
    new = run(
        agent,
        "correct_fact",
        old.id,
        {"text": "I prefer PostgreSQL for backend projects.", "reason": "changed my mind"},
    )
    assert new.memory.supersedes_fact_id == old.id
    assert [v.id for v in run(agent, "fact_history", new.id).versions] == [old.id, new.id]
    assert [f.id for f in run(agent, "list_facts", subject_key="user", kind=kind).facts] == [new.id]
    tombstones = run(agent, "list_tombstones", kind=kind).tombstones
    assert len(tombstones) == 1
    with pytest.raises(ConflictError) as refused:
        run(agent, "write_fact", fact_body("i prefer mongodb for backend projects", kind=kind, sourceEventId="t9"))
    assert refused.value.context["tombstoneId"] == tombstones[0].tombstone_id
    assert refused.value.field == "text" and refused.value.http_status == 409 and not refused.value.retryable
    assert run(admin, "lift_tombstone", tombstones[0].tombstone_id, {"reason": "fine again"}).lifted_at
    assert run(agent, "retract_fact", new.id, {"reason": "no longer true"}).status == "retracted"

    parked = [
        run(
            agent,
            "write_fact",
            fact_body(f"The user likes {w} ({tag})", kind="likes", sourceEventId=w),
            origin="derived",
        )
        for w in ("jazz", "opera", "techno")
    ]
    assert {p.outcome for p in parked} == {"parked"}
    queued = {item.fact.id for item in run(admin, "review_queue", kind="likes").items}
    assert {p.id for p in parked} <= queued
    assert run(admin, "approve", parked[0].id, {"reason": "checked"}).memory.status == "active"
    assert run(admin, "reject", parked[1].id, {"reason": "wrong"}).status == "rejected"
    edited = run(admin, "edit_and_approve", parked[2].id, {"text": f"The user likes house music ({tag})"})
    assert edited.memory.event["text"].startswith("The user likes house music")

    found = run(agent, "recall", {"query": "where is the staging database", "limit": 3, "explain": True})
    assert isinstance(found, RecallResponse) and found.memories[0].id == first.id
    assert found.memories[0].explain is not None and found.context.startswith("Historical memory")
    assert run(agent, "recall", "staging database Frankfurt").memories[0].id == first.id

    policy = run(admin, "get_policy")
    assert run(admin, "put_policy", policy) == policy
    created = run(admin, "create_key", {"role": "reviewer", "label": tag})
    assert created.key.startswith("egm.t1.")
    assert created.key_id in {k.key_id for k in run(admin, "list_keys").keys}
    assert run(admin, "revoke_key", created.key_id) is None
    actions = {e.action for e in run(admin, "audit", limit=1000).entries}
    assert {"key.create", "key.revoke"} <= actions


def test_sync_client_covers_every_endpoint(server: LiveServer) -> None:
    with Client(server.url, server.key()) as agent, Client(server.url, server.key(role="admin")) as admin:
        _tour(lambda client, name, *a, **k: getattr(client, name)(*a, **k), agent, admin, "sync")


def test_async_client_covers_every_endpoint(server: LiveServer) -> None:
    agent_key, admin_key = server.key(), server.key(role="admin")

    async def main() -> None:
        async with AsyncClient(server.url, agent_key) as agent, AsyncClient(server.url, admin_key) as admin:
            loop = asyncio.get_running_loop()

            def run(client: AsyncClient, name: str, *args: Any, **kwargs: Any) -> Any:
                # The tour is synchronous; each awaited call runs on this loop from a worker thread.
                return asyncio.run_coroutine_threadsafe(getattr(client, name)(*args, **kwargs), loop).result(30)

            await asyncio.to_thread(_tour, run, agent, admin, "async")

    asyncio.run(main())


def test_problem_json_becomes_the_typed_error_with_status_and_field(server: LiveServer) -> None:
    with Client(server.url, server.key()) as agent:
        with pytest.raises(InvalidInputError) as invalid:
            agent.write_episode({**episode_body(), "eventId": "0" * 64})
        assert (invalid.value.field, invalid.value.http_status, invalid.value.code) == ("eventId", 422, "invalid_input")
        assert invalid.value.context["expected"] and not invalid.value.retryable
        with pytest.raises(AuthorizationError) as forbidden:
            agent.recall({"query": "x", "scope": {"agentId": "someone-else"}})
        assert forbidden.value.field == "agentId" and forbidden.value.http_status == 403
        with pytest.raises(NotFoundError):
            agent.get_fact("f" * 64)
        with pytest.raises(AuthorizationError):
            agent.list_keys()
    with Client(server.url, "egm.t1.nope.nope") as stranger, pytest.raises(AuthenticationError) as denied:
        stranger.recall("anything")
    assert denied.value.http_status == 401


def test_invalid_bodies_are_refused_before_sending() -> None:
    with Client(dead_url()) as client:  # nothing listens: a request would be a TransportError
        with pytest.raises(InvalidInputError) as error:
            client.write_episode({**episode_body(), "surprise": 1})
        assert error.value.field == "surprise"
        with pytest.raises(InvalidInputError):
            client.recall({"query": "x", "limit": 500})
        for bad, field in (
            (fact_body("   "), "text"),
            (fact_body(validUntil="2026-08-17T00:00:00Z"), "validUntil"),
            (episode_body("", " ", summary=" "), "summary"),
        ):
            write = client.write_episode if field == "summary" else client.write_fact
            with pytest.raises(InvalidInputError) as meaningless:
                write(bad)
            assert meaningless.value.field == field
        with pytest.raises(TransportError):  # positive control: a good body is sent (to no one)
            client.write_fact(fact_body(validUntil="2026-08-19T00:00:00Z"))
        for decision in ({}, {"reason": " "}):
            with pytest.raises(InvalidInputError) as unexplained:
                client.reject("f" * 64, decision)
            assert unexplained.value.field == "reason"
        with pytest.raises(TransportError):
            client.reject("f" * 64, {"reason": "made up"})


def test_transient_failures_are_retryable_and_typed(
    proxy: FaultProxy, black_hole: BlackHole, server: LiveServer
) -> None:
    proxy.fault_on = ("POST", "/v1/recall")
    proxy.fail_next("503", "500", "429", "drop")
    with Client(proxy.url, server.key()) as client:
        expected: list[type[EngramError]] = [BackendUnavailableError, ServerError, RateLimitedError, TransportError]
        for cls in expected:
            with pytest.raises(cls) as error:
                client.recall("anything")
            assert error.value.retryable, error.value
        assert client.recall("anything").memories == []
    with Client(dead_url()) as down, pytest.raises(TransportError) as refused:
        down.health()
    assert refused.value.retryable and refused.value.http_status == 0
    with Client(black_hole.url, timeout=0.2) as silent, pytest.raises(RequestTimeoutError) as late:
        silent.health()
    assert late.value.retryable and late.value.code == "timeout"
