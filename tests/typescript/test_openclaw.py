"""The plugin inside the real OpenClaw, installed by docs/integrations.md's steps word for word: its
loader finds and activates it, a turn against the scripted model lands as an episode and the model's
memory_store call as a fact (derived: it waits for review), the next session's prompt carries the
recalled memory and the model's memory_search tool finds it; another sender's does neither."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb_bench.scripted_chat import Reply, ScriptedChat
from tests.conftest import LiveServer
from tests.typescript.openclaw_home import OpenClawHome

FACT = "My favourite tea is genmaicha from Kyoto."
STORE = {"action": "add", "subject": "user", "kind": "tea", "text": "The user's favourite tea is genmaicha."}


def _model(messages: list[dict[str, Any]]) -> str | Reply:
    """The scripted model: asked which tea, it first searches memory through OpenClaw's tool router."""
    if any(m["role"] == "tool" for m in messages):  # OpenClaw appends its own context after the result
        return "Noted."
    if "Which tea" in json.dumps(messages):
        return Reply(tool="tool_call", arguments={"id": "memory_search", "args": {"query": "favourite tea"}})
    if FACT in json.dumps(messages):  # asked to remember: the model stores a fact through OpenClaw's router
        return Reply(tool="tool_call", arguments={"id": "memory_store", "args": STORE})
    return "Noted, I will remember that."


def _tool_results(chat: ScriptedChat) -> list[str]:
    """What the memory tool answered, in the order the model saw it."""
    return [json.dumps(m["content"]) for r in chat.requests for m in r["messages"] if m["role"] == "tool"]


def _prompts(chat: ScriptedChat) -> list[str]:
    """What each request to the model said, as one text."""
    return [json.dumps(r["messages"]) for r in chat.requests]


def _episodes(server: LiveServer, key: str, user: str) -> list[dict[str, Any]]:
    return _listed(server, key, user, "/v1/episodes", "episodes", {})


def _facts(server: LiveServer, key: str, user: str) -> list[dict[str, Any]]:
    return _listed(server, key, user, "/v1/facts", "facts", {"includePending": "true"})


def _listed(
    server: LiveServer, key: str, user: str, path: str, field: str, extra: dict[str, str]
) -> list[dict[str, Any]]:
    scope = {
        "agentId": "main",
        "profileId": "default",
        "userId": user,
        "privacyScope": "private",
        "sandboxEligible": False,
    }
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        resolved = http.post("/v1/scope/resolve", json=scope).json()["scope"]
        answer = http.get(path, params=resolved | extra)
        assert answer.status_code == 200, answer.text
        return list(answer.json()[field])


@pytest.mark.timeout(900)  # five OpenClaw commands, 10-40 s each on this 2-core machine
def test_a_turn_lands_and_the_next_session_of_the_same_sender_recalls_it(
    workspace: dict[str, str], server: LiveServer, tmp_path: Path
) -> None:
    key = server.key(role="host", agentId="main", profileId="default")
    chat = ScriptedChat(_model)
    try:
        home = OpenClawHome(tmp_path / "openclaw", chat.url)
        home.install_as_documented(server.url, key)
        config = home.config()
        assert config["plugins"]["slots"]["memory"] == "engramdb"  # OpenClaw's installer chose it
        entry = config["plugins"]["entries"]["engramdb"]
        assert entry["enabled"] and "apiKey" not in entry["config"]  # no secret in openclaw.json
        entry["config"]["recallTimeoutMs"] = 10_000  # the test's: a loaded CI machine, not the 300 ms default
        home.write_config(config)
        home.extra_env["ENGRAM_API_KEY"] = key  # as the page says: OpenClaw's environment holds the key

        home.turn("alice", "alice-1", FACT)
        episodes = _episodes(server, key, "alice")
        assert [e["event"]["userText"] for e in episodes] == [FACT]
        assert episodes[0]["event"]["runtime"] == "openclaw" and episodes[0]["event"]["externalSessionId"]
        assert _episodes(server, key, "bob") == []  # the participant is alice's, not every sender's
        [fact] = _facts(server, key, "alice")  # memory_store, routed by OpenClaw with alice's context
        assert (fact["event"]["text"], fact["origin"], fact["status"]) == (STORE["text"], "derived", "pending_review")
        assert "Stored as" in _tool_results(chat)[-1] and _facts(server, key, "bob") == []

        home.turn("alice", "alice-2", "Which tea do I like?")
        assert "genmaicha" in _prompts(chat)[-1] and "<engramdb-memory>" in _prompts(chat)[-1]
        assert "genmaicha" in _tool_results(chat)[-1]  # the model's memory_search, routed by OpenClaw
        stored = {e["event"]["userText"]: e["event"]["assistantText"] for e in _episodes(server, key, "alice")}
        assert stored["Which tea do I like?"] == "Noted."  # the tool's output is not captured

        home.turn("bob", "bob-1", "Which tea do I like?")
        assert "Which tea do I like?" in _prompts(chat)[-1]  # bob's turn reached the model ...
        assert "genmaicha" not in _prompts(chat)[-1]  # ... without alice's memory
        assert "No memories found." in _tool_results(chat)[-1]  # bob's tool call ran, in bob's scope
        assert [e["event"]["userText"] for e in _episodes(server, key, "bob")] == ["Which tea do I like?"]
    finally:
        chat.close()
