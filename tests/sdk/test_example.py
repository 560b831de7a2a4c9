"""examples/agent_loop.py end to end: a scripted chat server, the real EngramDB server."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engramdb.contract.canonical import hash_scope
from engramdb.sdk import Client
from tests.conftest import LiveServer
from tests.sdk.chat_server import ScriptedChat

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"


def _answer(messages: list[dict[str, Any]]) -> str:
    """The scripted model: it answers from the memory block when there is one."""
    question = messages[-1]["content"]
    memory = " ".join(m["content"] for m in messages[:-1] if m["role"] == "system")
    if question.endswith("?") and "drink" in question.lower():
        return "You drink green tea in the morning." if "green tea" in memory else "I don't know."
    return f"Noted: {question}"


@pytest.fixture
def chat() -> Iterator[ScriptedChat]:
    server = ScriptedChat(_answer)
    yield server
    server.close()


def _run(chat: ScriptedChat, server: LiveServer, key: str, profile: Path, session: str, *says: str) -> list[str]:
    command = [
        sys.executable,
        "-I",
        str(EXAMPLE),
        "--chat-url",
        chat.url,
        "--model",
        "scripted",
        "--engram-url",
        server.url,
        "--engram-key",
        key,
        "--participant",
        "alice",
        "--session",
        session,
        "--profile-dir",
        str(profile),
    ]
    for say in says:
        command += ["--say", say]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_example_agent_remembers_across_sessions(chat: ScriptedChat, server: LiveServer, tmp_path: Path) -> None:
    key = server.key(role="host", agentId="assistant", profileId="default")
    profile = tmp_path / "agent"
    says = [
        "What do I drink in the morning?",
        "I drink green tea every morning.",
        "/remember user morning-drink The user drinks green tea.",
    ]
    first = _run(chat, server, key, profile, "monday", *says)
    assert first[:2] == ["I don't know.", "Noted: I drink green tea every morning."]
    assert first[2].startswith("(remembered ") and len(first[2]) == len("(remembered )") + 64
    assert len(chat.requests[0]["messages"]) == 2  # nothing recalled yet: no memory block

    second = _run(chat, server, key, profile, "tuesday", "What do I drink in the morning?")
    assert second == ["You drink green tea in the morning."]
    block = chat.requests[-1]["messages"][1]
    assert block["role"] == "system" and block["content"].startswith("Historical memory follows.")
    assert "The user drinks green tea." in block["content"] and "I drink green tea every morning." in block["content"]

    scope = {
        "privacyScope": "private",
        "sandboxEligible": False,
        "participantScopeHash": hash_scope(["example", "alice"], ""),
    }
    with Client(server.url, key) as client:
        facts = client.list_facts(scope=scope, subject_key="user").facts
        found = client.recall({"query": "green tea morning", "scope": scope}).memories
    assert [f.event["text"] for f in facts] == ["The user drinks green tea."]
    assert {m.source for m in found} == {"EPISODE", "MEMORY_FACT"}


def test_the_ten_line_example_in_the_docs_runs(
    server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "sdk.md").read_text()
    section = docs.split("## Integrate your agent", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) <= 10
    monkeypatch.chdir(tmp_path)  # the example's profile folder is relative
    sent: list[str] = []
    prompts: list[list[dict[str, str]]] = []

    def llm(messages: list[dict[str, str]]) -> str:
        prompts.append(messages)
        return "Noted." if not messages[0]["content"] else "You prefer TypeScript for billing."

    names: dict[str, Any] = {
        "URL": server.url,
        "KEY": server.key(role="host", agentId="assistant", profileId="default"),
        "SALT": "docs-salt",
        "user_id": "u-42",
        "chat_id": "chat-1",
        "llm": llm,
        "send": sent.append,
        "incoming_messages": lambda: ["Use TypeScript for the billing service.", "Which language for billing?"],
    }
    exec(compile(code, "docs/sdk.md", "exec"), names)
    assert sent == ["Noted.", "You prefer TypeScript for billing."]
    assert "Use TypeScript for the billing service." in prompts[1][0]["content"]  # recalled from the cache
