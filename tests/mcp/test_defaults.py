"""What the MCP tool listing advertises is what the tools take (issue 31): every tool, called by the
mcp package's own client over streamable HTTP with exactly the defaults its input schema advertises
(and a real value for each required argument), answers without an error; the tools that ask the
chat model (extract_facts, reflect) are listed only by a server with a model, and there they work
(a scripted OpenAI-compatible model on loopback)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from engramdb.config import LLMSettings, Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.port import Store
from tests.assist.brain import Brain
from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body
from tests.mcp.helpers import MODEL_TOOLS, TOOLS, assert_tools_take_no_scope, error_code, ok
from tests.mcp.test_http import run
from tests.sdk.chat_server import ScriptedChat

Seeds = dict[str, str]
# A real value for each required argument, from what the test seeded (facts, records).
REQUIRED: dict[str, Callable[[Seeds], dict[str, Any]]] = {
    "recall": lambda s: {"query": "which database for backend work?"},
    "remember_fact": lambda s: {"subject": "user", "kind": "editor", "text": "The user edits in Helix."},
    "correct_fact": lambda s: {
        "fact_id": s["to_correct"],
        "text": "The user prefers PostgreSQL.",
        "reason": "switched",
    },
    "retract_fact": lambda s: {"fact_id": s["to_retract"], "reason": "not true any more"},
    "fact_history": lambda s: {"fact_id": s["to_correct"]},
    "save_record": lambda s: {"label": "TASK", "data": {"title": "Ship the retry fix"}},
    "link_records": lambda s: {"from_id": s["session"], "type": "MENTIONS", "to_id": s["task"]},
    "extract_facts": lambda s: {"text": "I moved to Lisbon last month."},
}


@pytest.fixture
def backend() -> str:
    """The schemas and the argument handling are the same on both backends: one is enough here."""
    return "sqlite"


def _seed(server: LiveServer, key: str) -> Seeds:
    with server.client(key) as http:
        seeds = {
            name: http.post("/v1/facts", json=fact_body(text, kind=kind)).json()["id"]
            for name, text, kind in (
                ("to_correct", "The user prefers MongoDB for backend work.", "database"),
                ("to_retract", "The user lives in Porto.", "home"),
                ("stated", "The user hikes every weekend.", "hobby"),
            )
        }
        assert http.post("/v1/episodes", json=episode_body("Ship the billing service on Friday.")).status_code == 201
        for label, title in (("SESSION", "Billing planning"), ("TASK", "Add idempotency keys")):
            written = http.post("/v1/records", json={"label": label, "data": {"title": title}})
            seeds[label.lower()] = written.json()["records"][0]["id"]
    return seeds


def _advertised(tool: Any, seeds: Seeds) -> dict[str, Any]:
    """The call a client builds from the listing: each advertised default as is, required values real."""
    schema = tool.input_schema
    properties: dict[str, Any] = schema.get("properties", {})
    args = {name: prop["default"] for name, prop in properties.items() if "default" in prop}
    for name, value in args.items():  # the schema itself admits what it advertises
        assert Draft202012Validator(properties[name]).is_valid(value), f"{tool.name}.{name} default {value!r}"
    required = REQUIRED[tool.name](seeds) if schema.get("required") else {}
    assert set(schema.get("required", [])) == set(required), tool.name
    return {**args, **required}


def _call_everything(server: LiveServer, model: bool) -> dict[str, str]:
    key = server.key()
    seeds = _seed(server, key)
    said: dict[str, str] = {}

    async def body(client: Client) -> None:
        tools = (await client.list_tools()).tools
        assert_tools_take_no_scope(tools, model=model)
        for tool in tools:
            args = _advertised(tool, seeds)
            said[tool.name] = ok(await client.call_tool(tool.name, args))
        # Leaving the defaults out means the same.
        again = await client.call_tool("find_records", {})
        assert ok(again) == said["find_records"]

    run(server, key, body)
    return said


def test_every_tool_takes_the_defaults_it_advertises(server: LiveServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    said = _call_everything(server, model=False)
    assert set(said) == TOOLS  # no model: no tool that would need one
    assert "Add idempotency keys" in said["find_records"] and "Billing planning" in said["find_records"]
    assert said["delete_records"].startswith("Would delete")  # confirm defaults to false: a preview
    assert "MongoDB" in said["recall"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


def test_model_tools_are_listed_only_without_a_model_and_say_nothing_in_the_logs(
    server: LiveServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)

    async def body(client: Client) -> None:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == TOOLS and not names & MODEL_TOOLS
        with pytest.raises(MCPError) as unknown:  # an unknown tool: the specification's protocol error
            await client.call_tool("extract_facts", {"text": "I moved to Lisbon."})
        assert unknown.value.code == INVALID_PARAMS and "extract_facts" in unknown.value.message
        assert ok(await client.call_tool("list_facts", {}))  # the positive control: the session goes on

    run(server, server.key(), body)
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


@pytest.fixture
def brain() -> Brain:
    return Brain()  # no rules: it finds no fact and writes no reflection


@pytest.fixture
def chat(brain: Brain) -> Iterator[ScriptedChat]:
    scripted = ScriptedChat(brain)
    yield scripted
    scripted.close()


@pytest.fixture
def with_model(tmp_path: Path, store: Store, chat: ScriptedChat) -> Iterator[LiveServer]:
    llm = LLMSettings(base_url=chat.url, model="scripted", timeout_seconds=5.0, workers=0, worker_process=False)
    live = LiveServer(Settings(home=tmp_path / "model-home", embedder="hashing", llm=llm), store, HashingEmbedder())
    live.start()
    yield live
    live.stop()


def test_with_a_model_the_model_tools_are_listed_and_take_their_defaults(with_model: LiveServer, brain: Brain) -> None:
    said = _call_everything(with_model, model=True)
    assert set(said) == TOOLS | MODEL_TOOLS
    assert said["extract_facts"].startswith("No facts") and brain.asked("extract")  # the model was asked
    assert said["reflect"].startswith("No reflections") and brain.asked("reflect")


def test_a_required_argument_is_not_advertised_as_null(with_model: LiveServer) -> None:
    async def body(client: Client) -> None:
        [extract] = [t for t in (await client.list_tools()).tools if t.name == "extract_facts"]
        assert extract.input_schema["properties"]["text"]["type"] == "string"
        assert error_code(await client.call_tool("extract_facts", {"text": None})) == "invalid_input"

    run(with_model, with_model.key(), body)
