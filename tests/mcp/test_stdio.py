"""MCP over stdio: `python -m engramdb.cli mcp …` spawned by the mcp package's own client.

The data folder is seeded and checked from this process through the service, as the operator.
"""

from __future__ import annotations

from mcp.client import Client

from tests.mcp.helpers import assert_tools_take_no_scope, error_code, ok, text
from tests.mcp.spawn import ALICE, BOB, TENANT, Home, serve


def test_stdio_serves_every_tool_in_the_configured_scope(home: Home) -> None:
    stated = home.fact("The user prefers MongoDB for backend work.", ALICE, kind="database")
    home.episode("Ship the billing service on Friday.", ALICE, observedAt="2026-08-01T00:00:00Z")
    home.episode("Billing moved to Monday.", ALICE, turn=1, observedAt="2026-08-10T00:00:00Z")
    home.embed()
    found: dict[str, str] = {}

    async def body(client: Client) -> None:
        assert client.protocol_version.startswith("2026")
        assert_tools_take_no_scope((await client.list_tools()).tools)
        remembered = await client.call_tool(
            "remember_fact", {"subject": "user", "kind": "editor", "text": "The user edits in Helix."}
        )
        assert "status pending_review" in ok(remembered)
        assert remembered.structured_content is not None
        found["remembered"] = remembered.structured_content["factId"]
        assert stated in ok(await client.call_tool("list_facts", {"subject": "user", "kind": "database"}))
        resource = await client.read_resource("engram://facts/user")
        assert stated in resource.contents[0].text  # type: ignore[union-attr]
        recalled = ok(await client.call_tool("recall", {"query": "database for backend work", "limit": 3}))
        assert "MongoDB" in recalled and f"= {stated}" in recalled
        assert "Helix" not in recalled  # pending: not recalled
        corrected = await client.call_tool(
            "correct_fact", {"fact_id": stated, "text": "The user prefers PostgreSQL.", "reason": "switched"}
        )
        assert corrected.structured_content is not None
        assert corrected.structured_content["status"] == "pending_review"
        found["correction"] = corrected.structured_content["factId"]
        episodes = ok(await client.call_tool("recent_episodes", {}))
        assert episodes.index("Billing moved to Monday.") < episodes.index("Ship the billing service")
        history = ok(await client.call_tool("fact_history", {"fact_id": stated}))
        assert stated in history and "active" in history
        retracted = await client.call_tool("retract_fact", {"fact_id": stated, "reason": "not true"})
        assert ok(retracted).startswith(f"Retracted fact {stated}")
        again = await client.call_tool("correct_fact", {"fact_id": stated, "text": "x", "reason": "y"})
        assert error_code(again) == "conflict"

    serve(home, ALICE, body)
    parked = home.get(found["remembered"], ALICE)
    assert (parked.status, parked.origin, parked.event["provenance"]) == ("pending_review", "derived", "mcp:stdio")
    correction = home.get(found["correction"], ALICE)
    assert (correction.status, correction.event["supersedesFactId"]) == ("pending_review", stated)
    assert home.get(stated, ALICE).status == "retracted"
    audit = home.store.tenant(TENANT).audit_entries(0, 100)
    assert {(e.action, e.actor_key_id, e.actor_role) for e in audit if e.target_id == stated} >= {
        ("fact.retract", "local-mcp", "agent")
    }


def test_stdio_cannot_reach_another_scopes_memory(home: Home) -> None:
    mine = home.fact("Alice's favourite fruit is mango.", ALICE, kind="fruit")
    theirs = home.fact("Bob's favourite fruit is pineapple.", BOB, kind="fruit")
    home.episode("Bob keeps a pineapple on his desk.", BOB)
    home.embed()

    async def as_alice(client: Client) -> None:
        assert client.protocol_version.startswith("2025")  # a handshake-era host
        assert "mango" in ok(await client.call_tool("recall", {"query": "favourite fruit"}))  # positive control
        for query in ("pineapple", "Bob's favourite fruit", "desk"):
            assert "pineapple" not in ok(
                await client.call_tool("recall", {"query": query, "limit": 50, "include_history": True})
            )
            smuggled = await client.call_tool("recall", {"query": query, "limit": 50, **BOB})
            assert error_code(smuggled) == "invalid_input" and "pineapple" not in text(smuggled)
        refused = await client.call_tool("list_facts", {"participantScopeHash": BOB["participantScopeHash"]})
        assert error_code(refused) == "invalid_input" and "participantScopeHash" in text(refused)
        listing = ok(await client.call_tool("list_facts", {}))
        assert mine in listing and theirs not in listing
        assert "pineapple" not in ok(await client.call_tool("recent_episodes", {"about": "pineapple desk"}))
        for tool, args in [
            ("fact_history", {}),
            ("retract_fact", {"reason": "r"}),
            ("correct_fact", {"text": "kiwi", "reason": "r"}),
        ]:
            assert error_code(await client.call_tool(tool, {"fact_id": theirs, **args})) == "not_found"

    serve(home, ALICE, as_alice, mode="legacy")
    assert home.get(theirs, BOB).status == "active"
