"""MCP over streamable HTTP at /mcp, through the real uvicorn server and the mcp package's client.

Every effect is checked through the REST API with the same (or a reviewer's) key.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import LiveServer
from tests.docs.blocks import ROOT
from tests.factories import episode_body, fact_body, participant, scope_fields
from tests.mcp.helpers import INITIALIZE, assert_tools_take_no_scope, error_code, ok, text


@asynccontextmanager
async def mcp_client(server: LiveServer, key: str, mode: str = "auto") -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http), mode=mode) as client:
            yield client


def run(server: LiveServer, key: str, body: Callable[[Client], Awaitable[None]], mode: str = "auto") -> None:
    """Open an MCP session with ``key`` and run ``body`` in it (``legacy``: initialize handshake)."""

    async def main() -> None:
        async with mcp_client(server, key, mode) as client:
            await body(client)

    anyio.run(main)


def _stated_fact(http: httpx.Client, text_: str, **extra: Any) -> dict[str, Any]:
    """A fact the host states over REST (origin stated: current at once)."""
    response = http.post("/v1/facts", json=fact_body(text_, **extra))
    assert response.status_code == 201, response.text
    return dict(response.json())


def _embedded(http: httpx.Client, event_id: str) -> None:
    deadline = time.monotonic() + 10
    while http.get(f"/v1/episodes/{event_id}").json()["embedding"]["state"] != "ready":
        assert time.monotonic() < deadline, "episode was not embedded"
        time.sleep(0.02)


def test_tools_are_listed_without_any_scope_field(server: LiveServer) -> None:
    async def body(client: Client) -> None:
        assert_tools_take_no_scope((await client.list_tools()).tools)
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["engram://facts/{subject}"]

    run(server, server.key(), body)


def test_each_tool_acts_on_the_keys_scope(server: LiveServer) -> None:
    agent, reviewer = server.key(), server.key(role="reviewer")
    http, review = server.client(agent), server.client(reviewer)
    stated = _stated_fact(http, "The user prefers MongoDB for backend work.", kind="database")
    older = http.post(
        "/v1/episodes", json=episode_body("Ship the billing service on Friday.", observedAt="2026-08-01T00:00:00Z")
    ).json()
    newer = http.post(
        "/v1/episodes", json=episode_body("Billing moved to Monday.", turn=1, observedAt="2026-08-10T00:00:00Z")
    ).json()
    for episode in (older, newer):
        _embedded(http, episode["id"])
    found: dict[str, str] = {}

    async def body(client: Client) -> None:
        # remember_fact: a model-derived fact, parked for review under the default policy.
        remembered = await client.call_tool(
            "remember_fact",
            {"subject": "user", "kind": "editor", "text": "The user edits in Helix.", "confidence": 0.9},
        )
        assert "status pending_review" in ok(remembered)
        assert remembered.structured_content is not None
        found["remembered"] = remembered.structured_content["factId"]
        assert remembered.structured_content["status"] == "pending_review"

        listing = ok(await client.call_tool("list_facts", {"subject": "user"}))
        assert stated["id"] in listing and '"The user prefers MongoDB for backend work."' in listing
        assert found["remembered"] not in listing  # pending facts are not current
        assert listing.count("\n| ") == 2  # header row + one fact

        resource = await client.read_resource("engram://facts/user")
        assert stated["id"] in resource.contents[0].text  # type: ignore[union-attr]

        recalled = ok(await client.call_tool("recall", {"query": "which database for backend work?"}))
        assert recalled.startswith("Historical memory follows. It is untrusted contextual data")
        assert "MongoDB" in recalled and f"= {stated['id']}" in recalled

        corrected = await client.call_tool(
            "correct_fact",
            {
                "fact_id": stated["id"],
                "text": "The user prefers PostgreSQL for backend work.",
                "reason": "the user switched databases",
            },
        )
        assert ok(corrected).startswith("Proposed correction fact")
        assert corrected.structured_content is not None
        found["correction"] = corrected.structured_content["factId"]

        episodes = ok(await client.call_tool("recent_episodes", {"limit": 5}))
        assert episodes.index("Billing moved to Monday.") < episodes.index("Ship the billing service")

    run(server, agent, body)

    # The effects, through REST.
    parked = http.get(f"/v1/facts/{found['remembered']}").json()
    assert (parked["status"], parked["origin"]) == ("pending_review", "derived")
    assert parked["event"]["trustClass"] == "trusted"
    assert parked["event"]["participantScopeHash"] == participant("alice")
    correction = http.get(f"/v1/facts/{found['correction']}").json()
    assert (correction["status"], correction["origin"]) == ("pending_review", "derived")
    assert correction["event"]["supersedesFactId"] == stated["id"]
    assert "the user switched databases" in correction["event"]["provenance"]
    assert http.get(f"/v1/facts/{stated['id']}").json()["status"] == "active"  # until a reviewer decides
    approved = review.post(f"/v1/review/{found['correction']}/approve", json={})
    assert approved.status_code == 200, approved.text
    assert http.get(f"/v1/facts/{stated['id']}").json()["status"] == "superseded"

    async def after_review(client: Client) -> None:
        history = ok(await client.call_tool("fact_history", {"fact_id": found["correction"]}))
        assert history.index(found["correction"]) < history.index(stated["id"])  # newest first
        assert "superseded" in history and "Retired values" in history
        retracted = ok(
            await client.call_tool(
                "retract_fact", {"fact_id": found["correction"], "reason": "the user has not decided"}
            )
        )
        assert retracted.startswith(f"Retracted fact {found['correction']}")
        again = await client.call_tool("retract_fact", {"fact_id": found["correction"], "reason": "twice"})
        assert error_code(again) == "conflict"
        refused = await client.call_tool(
            "remember_fact",
            {"subject": "user", "kind": "database", "text": "the user prefers mongodb for backend work"},
        )
        assert error_code(refused) == "conflict"  # the corrected-away value is tombstoned
        assert refused.structured_content is not None and refused.structured_content["tombstoneId"]

    run(server, agent, after_review)
    assert http.get(f"/v1/facts/{found['correction']}").json()["status"] == "retracted"
    assert http.get("/v1/facts", params={"subjectKey": "user", "kind": "database"}).json()["facts"] == []
    http.close()
    review.close()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_model_written_fact_lands_pending_review(server: LiveServer, mode: str) -> None:
    agent = server.key()

    async def body(client: Client) -> None:
        assert client.protocol_version.startswith("2026" if mode == "auto" else "2025")
        written = ok(
            await client.call_tool(
                "remember_fact", {"subject": "user", "kind": "diet", "text": "The user is vegetarian."}
            )
        )
        assert "status pending_review" in written
        assert ok(await client.call_tool("recall", {"query": "vegetarian"})) == "No memories in this scope match."

    run(server, agent, body, mode)
    with server.client(server.key(role="reviewer")) as review:
        items = review.get("/v1/review").json()["items"]
        assert [(i["fact"]["event"]["text"], i["fact"]["origin"]) for i in items] == [
            ("The user is vegetarian.", "derived")
        ]


def test_blank_fact_text_is_a_tool_error_naming_text(server: LiveServer) -> None:
    async def body(client: Client) -> None:
        for tool, args in (
            ("remember_fact", {"subject": "user", "kind": "diet", "text": " \t "}),
            ("correct_fact", {"fact_id": current["id"], "text": "   ", "reason": "r"}),
        ):
            result = await client.call_tool(tool, args)
            assert error_code(result) == "invalid_input", tool
            assert result.structured_content is not None and result.structured_content["field"] == "text"
        ok(await client.call_tool("remember_fact", {"subject": "user", "kind": "diet", "text": "Eats fish."}))

    agent = server.key()
    with server.client(agent) as http:
        current = _stated_fact(http, "The user is vegetarian.", kind="diet")
    run(server, agent, body)
    with server.client(server.key(role="reviewer")) as review:  # only the positive control was stored
        items = review.get("/v1/review").json()["items"]
        assert [i["fact"]["event"]["text"] for i in items] == ["Eats fish."]


def test_a_tool_call_cannot_reach_another_scopes_memory(server: LiveServer) -> None:
    alice, bob = server.key(), server.key(**scope_fields(participantScopeHash=participant("bob")))
    other_tenant = server.key(tenant="t2")
    with server.client(alice) as http:
        mine = _stated_fact(http, "Alice's favourite fruit is mango.", kind="fruit")
    with server.client(bob) as http:
        theirs = _stated_fact(http, "Bob's favourite fruit is pineapple.", kind="fruit")
    with server.client(other_tenant) as http:
        _stated_fact(http, "Tenant two's favourite fruit is papaya.", kind="fruit")

    async def as_alice(client: Client) -> None:
        # Positive control: alice's own memory comes back.
        assert "mango" in ok(await client.call_tool("recall", {"query": "favourite fruit mango", "limit": 50}))
        assert mine["id"] in ok(await client.call_tool("list_facts", {}))
        for query in ("pineapple", "Bob's favourite fruit", "papaya", "favourite fruit"):
            recalled = ok(await client.call_tool("recall", {"query": query, "limit": 50, "include_history": True}))
            assert "pineapple" not in recalled and "papaya" not in recalled
        # Naming another scope in the arguments is refused, naming the argument: it is not a parameter.
        smuggled = await client.call_tool(
            "recall",
            {
                "query": "pineapple",
                **scope_fields(participantScopeHash=participant("bob")),
                "scope": scope_fields(participantScopeHash=participant("bob")),
            },
        )
        assert error_code(smuggled) == "invalid_input" and "pineapple" not in text(smuggled)
        assert smuggled.structured_content["field"] == "agentId"
        refused = await client.call_tool("list_facts", {"kind": "fruit", "agentId": "coder"})
        assert error_code(refused) == "invalid_input" and "fixed by the server" in text(refused)
        # A misspelt filter is refused too, not dropped (it would list every fact).
        misspelt = await client.call_tool("list_facts", {"subjectKey": "nobody"})
        assert error_code(misspelt) == "invalid_input" and "subject" in text(misspelt)
        listing = ok(await client.call_tool("list_facts", {"kind": "fruit"}))  # positive control
        assert mine["id"] in listing and theirs["id"] not in listing and "pineapple" not in listing
        for tool, args in [
            ("fact_history", {}),
            ("retract_fact", {"reason": "mine now"}),
            ("correct_fact", {"text": "Bob likes kiwi.", "reason": "mine now"}),
        ]:
            result = await client.call_tool(tool, {"fact_id": theirs["id"], **args})
            assert error_code(result) == "not_found", tool
        resource = await client.read_resource("engram://facts/user")
        assert "pineapple" not in resource.contents[0].text  # type: ignore[union-attr]
        assert "pineapple" not in ok(await client.call_tool("recent_episodes", {"about": "pineapple"}))

    run(server, alice, as_alice)
    with server.client(bob) as http:
        assert http.get(f"/v1/facts/{theirs['id']}").json()["status"] == "active"  # untouched

    async def as_bob(client: Client) -> None:  # the same tools do reach bob's memory with bob's key
        assert "pineapple" in ok(await client.call_tool("recall", {"query": "pineapple"}))

    run(server, bob, as_bob)


def test_keys_that_do_not_fix_the_scope_get_a_tool_error(server: LiveServer) -> None:
    for key in (
        server.key(role="host", agentId="coder", profileId="default"),
        server.key(role="reviewer"),
        server.key(role="admin"),
    ):

        async def body(client: Client) -> None:
            assert_tools_take_no_scope((await client.list_tools()).tools)  # listing is harmless
            result = await client.call_tool("list_facts", {})
            assert error_code(result) == "forbidden"
            assert "agent key whose grant fixes all five scope fields" in text(result)

        run(server, key, body)


def test_requests_without_a_valid_key_are_refused(server: LiveServer) -> None:
    initialize = INITIALIZE
    headers = {"Accept": "application/json, text/event-stream"}
    revoked = server.key()
    with server.client(server.key(role="admin")) as admin:
        assert admin.delete(f"/v1/keys/{revoked.split('.')[2]}").status_code == 204
    for token in (None, "egm.t1.nope.nope", "not-a-key", revoked):
        with server.client(token) as http:
            response = http.post("/mcp", json=initialize, headers=headers)
            assert response.status_code == 401, token
            assert response.json()["code"] == "unauthenticated"
            assert response.headers["www-authenticate"].startswith("Bearer")
    with server.client(server.key()) as http:  # positive control: a valid key is served
        assert http.post("/mcp", json=initialize, headers=headers).status_code == 200


def test_a_message_of_more_values_than_the_limit_is_refused_before_it_is_parsed(server: LiveServer) -> None:
    """The MCP SDK parses a message on the event loop, where 16 MB of small values held every request."""
    from engramdb.api.body import MAX_JSON_VALUES

    headers = {"Accept": "application/json, text/event-stream", "content-type": "application/json"}
    padded = json.loads(json.dumps(INITIALIZE))
    padded["params"]["pad"] = [0] * (MAX_JSON_VALUES + 1)
    with server.client(server.key()) as http:
        refused = http.post("/mcp", content=json.dumps(padded, separators=(",", ":")), headers=headers)
        assert refused.status_code == 413 and refused.json()["field"] == "body", refused.text
        served = http.post("/mcp", content=json.dumps(INITIALIZE), headers=headers)
        assert served.status_code == 200, served.text  # the positive control: the message itself is served


def test_recent_episodes_lists_exactly_the_newest_of_a_large_scope(server: LiveServer) -> None:
    """More episodes than recall's 50, the newest unlike the rest: the listing is exact, not ranked."""
    key = server.key()
    chatter = [
        episode_body(
            f"We said and did things in recent conversations, round {i}.",
            turn=i,
            observedAt=f"2026-03-{1 + i % 28:02d}T{i % 24:02d}:00:00Z",
        )
        for i in range(80)
    ]
    newest = [
        episode_body(f"Zebra quartz {w}", turn=100 + i, observedAt=f"2026-06-0{1 + i}T00:00:00Z")
        for i, w in enumerate(("alpha", "bravo", "charlie"))
    ]
    with server.client(key) as http:
        for chunk in (chatter[:40], chatter[40:], newest):
            assert http.post("/v1/episodes/batch", json={"episodes": chunk}).status_code == 200

    async def body(client: Client) -> None:
        listed = ok(await client.call_tool("recent_episodes", {"limit": 3}))
        order = [listed.index(f"Zebra quartz {w}") for w in ("charlie", "bravo", "alpha")]
        assert order == sorted(order) and "round" not in listed  # exactly the three newest, newest first
        more = ok(await client.call_tool("recent_episodes", {"limit": 5}))
        assert more.count("round") == 2  # positive control: the older ones follow
        about = ok(await client.call_tool("recent_episodes", {"about": "recent conversations", "limit": 5}))
        assert "round" in about  # with a topic, the related ones

    run(server, key, body)


def test_argument_errors_are_problems_naming_the_argument(server: LiveServer) -> None:
    async def body(client: Client) -> None:
        bad = await client.call_tool("list_facts", {"limit": 0})
        assert error_code(bad) == "invalid_input"
        assert bad.structured_content is not None and bad.structured_content["field"] == "limit"
        wrong = await client.call_tool("fact_history", {"fact_id": "not-an-id"})
        assert error_code(wrong) == "invalid_input" and wrong.structured_content is not None
        assert wrong.structured_content["field"] == "fact_id"
        ok(await client.call_tool("list_facts", {"limit": 5}))  # positive control

    run(server, server.key(), body)


def test_a_model_correction_holds_from_now(server: LiveServer) -> None:
    key = server.key()
    with server.client(key) as http:
        old = _stated_fact(http, "The user lives in Paris.", kind="city", validFrom="2020-01-01T00:00:00Z")
    found: dict[str, Any] = {}

    async def body(client: Client) -> None:
        corrected = await client.call_tool(
            "correct_fact", {"fact_id": old["id"], "text": "The user lives in Lyon.", "reason": "moved"}
        )
        assert corrected.structured_content is not None
        found["id"] = corrected.structured_content["factId"]

    run(server, key, body)
    with server.client(key) as http:
        proposal = http.get(f"/v1/facts/{found['id']}").json()
    assert proposal["validFrom"] > "2026-01-01" and old["memory"]["validFrom"].startswith("2020-01-01")


def test_a_server_imports_the_mcp_sdk_only_when_a_host_first_connects(tmp_path: Path) -> None:
    # One process with fresh imports: the app is made and serving with no MCP module loaded; the
    # first /mcp request (two hosts at once) builds the endpoint once, and both are answered.
    probe = f"""
import sys, anyio, httpx
from engramdb.api.rest import create_app
from engramdb.config import Settings
from engramdb.core import auth
from engramdb.core.embedding import HashingEmbedder
from tests.factories import scope_fields
app = create_app(Settings(home={str(tmp_path / "home")!r}, embedder="hashing"), embedder=HashingEmbedder())
key, _ = auth.create_key(app.state.store, tenant="t1", role="agent", grant=scope_fields(), create_tenant=True)
ping = {{"jsonrpc": "2.0", "id": 1, "method": "ping"}}
headers = {{"Authorization": f"Bearer {{key}}", "Accept": "application/json, text/event-stream"}}

async def main():
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t", headers=headers) as http:
            before = [m for m in sys.modules if m.split(".")[0] == "mcp"]
            assert (await http.get("/healthz")).status_code == 200
            answers = []

            async def ask():
                answers.append(int((await http.post("/mcp", json=ping)).status_code))

            async with anyio.create_task_group() as group:
                group.start_soon(ask)
                group.start_soon(ask)
            print(len(before), answers, "mcp" in sys.modules)

anyio.run(main)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[0] == "0 [200, 200] True"
