"""Shared by the MCP tests: what the tool list must be, and how to read tool results."""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult, TextContent

TOOLS = {
    "recall",
    "remember_fact",
    "correct_fact",
    "retract_fact",
    "list_facts",
    "fact_history",
    "save_record",
    "find_records",
    "delete_records",
    "link_records",
    "knowledge_schema",
    "recent_episodes",
}
# An MCP client's first request, as JSON-RPC over HTTP.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
MODEL_TOOLS = {"extract_facts", "reflect"}  # listed only when a chat model is configured
SCOPE_FIELDS = {"agentId", "profileId", "privacyScope", "participantScopeHash", "sandboxEligible"}
# Any spelling of a scope field, or a scope object, is forbidden in a tool's input schema.
FORBIDDEN = {name.lower() for name in SCOPE_FIELDS} | {
    "agent_id",
    "profile_id",
    "privacy_scope",
    "participant_scope_hash",
    "sandbox_eligible",
    "scope",
}


def schema_names(schema: Any) -> set[str]:
    """Every property name, required entry and definition name anywhere in a JSON schema."""
    names: set[str] = set()
    if isinstance(schema, dict):
        for key in ("properties", "$defs", "definitions", "patternProperties"):
            if isinstance(schema.get(key), dict):
                names |= set(schema[key])
        if isinstance(schema.get("required"), list):
            names |= set(schema["required"])
        for value in schema.values():
            names |= schema_names(value)
    elif isinstance(schema, list):
        for value in schema:
            names |= schema_names(value)
    return names


def assert_tools_take_no_scope(tools: list[Any], *, model: bool = False) -> None:
    assert {t.name for t in tools} == TOOLS | (MODEL_TOOLS if model else set())
    for tool in tools:
        names = {n.lower() for n in schema_names(tool.input_schema)}
        assert names, f"{tool.name} has an empty schema"
        assert not names & FORBIDDEN, f"{tool.name} takes {names & FORBIDDEN}"
        assert tool.description and len(tool.description) > 80, tool.name
        assert not any(w in tool.name for w in ("approve", "review", "reject")), tool.name


def text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def ok(result: CallToolResult) -> str:
    assert not result.is_error, text(result)
    return text(result)


def error_code(result: CallToolResult) -> str:
    """The EngramError code of an error result (the same code the REST API answers)."""
    assert result.is_error, text(result)
    assert result.structured_content is not None
    code = str(result.structured_content["code"])
    assert text(result).startswith(f"{code}: ")
    return code
