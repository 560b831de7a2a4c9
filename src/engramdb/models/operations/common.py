"""What several operation declarations share: id parameters, MCP arguments, examples, MCP inputs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engramdb import clock
from engramdb.models.operation import McpArg, McpContext

EVENT_ID = {"event_id": "the episode's id (64 hex characters)"}
FACT_ID = {"fact_id": "the fact's id (64 hex characters)"}
MEMORY_ID = {"memory_id": "an episode's or a fact's id (64 hex characters)"}
HEX64 = {"pattern": r"^[0-9a-f]{64}$"}
MCP_FACT_ID = McpArg("fact_id", "the fact's id (64 hex characters), as list_facts or recall shows it", bounds=HEX64)
MCP_REASON = McpArg("reason", "why, in a short sentence", bounds={"max_length": 400})
# On the command line a fact's id may be a unique prefix of one the scope's facts (history too) have.
FACT_IDS: dict[str, Any] = {"id_prefix_of": "list_facts", "id_prefix_query": {"includeHistory": True, "limit": 1000}}

EPISODE_EXAMPLE = {
    "runtime": "custom",
    "externalSessionId": "s1",
    "turnIndex": 0,
    "userText": "Use TypeScript for the billing service.",
    "assistantText": "Will do.",
    "summary": "The user wants TypeScript for billing.",
    "conversationKind": "direct",
    "visibility": "participant",
    "trustClass": "trusted",
    "originClass": "conversation",
    "observedAt": "2026-08-18T00:00:00Z",
    "provenance": "readme",
}
FACT_EXAMPLE = {
    "runtime": "custom",
    "subjectKey": "user",
    "kind": "database",
    "confidence": 0.9,
    "text": "The user prefers PostgreSQL for backend projects.",
    "sourceEventId": "turn-7",
    "validFrom": "2026-08-18T00:00:00Z",
    "visibility": "participant",
    "trustClass": "trusted",
    "provenance": "readme",
}


def visibility(ctx: McpContext) -> str:
    return "shared" if ctx.grant.get("privacyScope") == "shared" else "participant"


def remembered(ctx: McpContext) -> Mapping[str, Any]:
    # Written through MCP: an authenticated channel the operator configured (trusted), by a
    # model (derived): the policy cell (trusted, derived) decides, by default pending_review.
    return {
        "runtime": "custom",
        "sourceEventId": "mcp:remember_fact",
        "validFrom": clock.now_text(),
        "visibility": visibility(ctx),
        "trustClass": "trusted",
        "provenance": f"mcp:{ctx.transport}",
        "origin": "derived",
    }


def proposed(ctx: McpContext) -> Mapping[str, Any]:
    # A correction a model makes is derived like any model write: by default it waits for a
    # reviewer and the corrected fact stays current until then.
    # From now on ("since today it is Y"), as MCP corrections always held; a host that means "it
    # was never X" corrects over REST, where the corrected fact's validFrom is the default.
    return {
        "origin": "derived",
        "validFrom": clock.now_text(),
        "provenance": f"mcp:{ctx.transport} correct_fact; reason: {ctx.args['reason']}",
    }


def about(ctx: McpContext) -> Mapping[str, Any]:
    return {"query": ctx.args["about"], "sources": ["EPISODE"], "limit": 50}
