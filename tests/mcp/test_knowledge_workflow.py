"""The MCP-only session workflow, end to end through the mcp package's own client and a spawned
`engram mcp`: one session writes a SESSION with its decisions and tasks and links them; a later
session (a new process) answers "what did we decide about billing, newest first" and "which
tasks mentioning Alice are still open" from the records alone."""

from __future__ import annotations

from typing import Any

from mcp.client import Client

from engramdb.models.knowledge import RecordQuery
from tests.factories import participant, scope_fields
from tests.mcp.helpers import ok
from tests.mcp.spawn import ALICE, OPERATOR, Home, serve

KICKOFF = {
    "title": "Billing service kickoff",
    "startedAt": "2026-08-18T09:00:00Z",
    "DECISION": [
        {"title": "Use TypeScript for the billing service", "topic": "billing"},
        {"title": "Keep the auth tokens short-lived", "topic": "auth"},
    ],
    "TASK": [
        {"title": "Write the invoice migration", "status": "open"},
        {"title": "Sketch the pricing page", "status": "open"},
    ],
}
FOLLOW_UP = {
    "title": "Billing follow-up",
    "startedAt": "2026-08-25T09:00:00Z",
    "DECISION": [{"title": "Move billing to PostgreSQL", "topic": "billing"}],
    "TASK": [
        {"title": "Load test the billing service", "status": "open"},
        {"title": "Draft the billing release notes", "status": "done"},
    ],
}


async def _save(client: Client, label: str, data: dict[str, Any], merge_by: list[str]) -> list[str]:
    saved = await client.call_tool("save_record", {"label": label, "data": data, "merge_by": merge_by})
    assert "model-derived" in ok(saved) and saved.structured_content is not None
    return list(saved.structured_content["ids"])


async def _find(client: Client, **args: Any) -> tuple[str, list[str]]:
    found = await client.call_tool("find_records", args)
    said = ok(found)
    assert found.structured_content is not None
    return said, list(found.structured_content.get("ids", []))


def test_an_mcp_only_agent_keeps_and_finds_its_decisions_and_tasks(home: Home) -> None:
    ids: dict[str, Any] = {}

    async def first_session(client: Client) -> None:
        assert ok(await client.call_tool("knowledge_schema", {})) == "No records in this memory scope yet."
        ids["kickoff"] = (await _save(client, "SESSION", KICKOFF, ["title"]))[0]
        ids["alice"] = (await _save(client, "ENTITY", {"name": "Alice", "role": "engineer"}, ["name"]))[0]
        ids["follow_up"] = (await _save(client, "SESSION", FOLLOW_UP, ["title"]))[0]
        again = await client.call_tool("save_record", {"label": "SESSION", "data": KICKOFF, "merge_by": ["title"]})
        assert again.structured_content is not None and again.structured_content["created"] == 0  # idempotent
        for title in ("Write the invoice migration", "Draft the billing release notes"):
            _, [task] = await _find(client, labels=["TASK"], where={"title": title})
            linked = ok(
                await client.call_tool("link_records", {"from_id": task, "type": "MENTIONS", "to_id": ids["alice"]})
            )
            assert linked.startswith(f"Linked RECORD {task} -MENTIONS-> RECORD {ids['alice']}")

    async def next_session(client: Client) -> None:
        schema = ok(await client.call_tool("knowledge_schema", {}))
        assert "- DECISION: 3 record(s)" in schema and "- TASK: 4 record(s)" in schema
        assert "-HAS_DECISION-> DECISION" in schema and "-MENTIONS-> ENTITY (2)" in schema
        said, decided = await _find(
            client, labels=["DECISION"], where={"topic": "billing"}, order_by={"$createdAt": "desc"}
        )
        assert said.index("Move billing to PostgreSQL") < said.index("Use TypeScript for the billing service")
        assert "auth tokens" not in said and len(decided) == 2
        said, _ = await _find(client, labels=["DECISION"], where={"SESSION": {"title": {"$contains": "follow-up"}}})
        assert "Move billing to PostgreSQL" in said and "TypeScript" not in said
        said, open_for_alice = await _find(
            client, labels=["TASK"], where={"status": "open", "ENTITY": {"name": "Alice"}}
        )
        assert "Write the invoice migration" in said and len(open_for_alice) == 1
        assert "release notes" not in said and "pricing page" not in said  # done / not Alice's
        said, _ = await _find(client, labels=["TASK"], query="performance testing of billing", limit=1)
        assert "Load test the billing service" in said
        ids["open_for_alice"] = open_for_alice
        preview = await client.call_tool("delete_records", {"labels": ["TASK"], "where": {"status": "done"}})
        assert "Nothing was deleted" in ok(preview)
        assert "release notes" in (await _find(client, labels=["TASK"], where={"status": "done"}))[0]
        done = await client.call_tool(
            "delete_records", {"labels": ["TASK"], "where": {"status": "done"}, "confirm": True}
        )
        assert ok(done).startswith("Deleted 1 record(s)")
        assert (await _find(client, labels=["TASK"], where={"status": "done"}))[0] == "No records match."

    serve(home, ALICE, first_session)
    home.embed()  # as the server's embedding worker would, between the sessions
    serve(home, ALICE, next_session)
    # What the model wrote is marked derived, in the scope the server was configured with.
    stored = home.service.record_reads.get_record(OPERATOR, ids["open_for_alice"][0], RecordQuery.model_validate(ALICE))
    assert stored.origin == "derived" and stored.properties["title"] == "Write the invoice migration"
    bob = scope_fields(participantScopeHash=participant("bob"))

    async def bobs_session(client: Client) -> None:  # another participant sees none of it
        assert ok(await client.call_tool("knowledge_schema", {})) == "No records in this memory scope yet."

    serve(home, bob, bobs_session)
