"""``Memory.add(..., infer=True)`` with a model configured (a scripted OpenAI-compatible model on
loopback): the server's extraction and judgement, embedded and against a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engramdb import Memory
from engramdb.config import Settings
from tests.assist.brain import Brain
from tests.assist.conftest import llm_settings
from tests.assist.helpers import fact
from tests.conftest import LiveServer
from tests.sdk.chat_server import ScriptedChat


@pytest.fixture
def brain() -> Brain:
    _, lisbon = fact("user", "city", "The user lives in Lisbon.")
    return Brain(facts=[("moved to Lisbon", lisbon)])  # the model finds the fact in the turn


@pytest.fixture
def chat(brain: Brain) -> Iterator[ScriptedChat]:
    scripted = ScriptedChat(brain)
    yield scripted
    scripted.close()


@pytest.fixture
def settings(tmp_path: Path, chat: ScriptedChat) -> Settings:
    """The server's settings, with the scripted model configured."""
    return llm_settings(tmp_path / "home", chat.url)


def _inferred(m: Memory, brain: Brain) -> None:
    added = m.add(
        [{"role": "user", "content": "I moved to Lisbon last month."}, {"role": "assistant", "content": "Noted!"}],
        user_id="alice",
        infer=True,
    )
    [result] = added["results"]
    assert brain.asked("extract")  # the model was asked
    assert (result["memory"], result["event"], result["status"]) == (
        "The user lives in Lisbon.",
        "ADD",
        "pending_review",
    )  # derived: reviewed first, and said
    assert m.get(result["id"])["memory"] == "The user lives in Lisbon."  # type: ignore[index]
    assert [r["id"] for r in m.get_all(user_id="alice")["results"]] == [result["id"]]
    assert m.get_all(user_id="bob")["results"] == []  # in alice's scope only (beside her fact above)


def test_infer_extracts_facts_against_a_server(server: LiveServer, brain: Brain) -> None:
    key = server.key(role="host", agentId="coder", profileId="default")
    with Memory(server.url, api_key=key, agent_id="coder", profile_id="default") as m:
        _inferred(m, brain)


def test_infer_extracts_facts_embedded(
    tmp_path: Path, chat: ScriptedChat, brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in (
        ("ENGRAM_EMBEDDER", "hashing"),
        ("ENGRAM_LLM__BASE_URL", chat.url),
        ("ENGRAM_LLM__MODEL", "scripted"),
    ):
        monkeypatch.setenv(name, value)
    with Memory(home=tmp_path / "engram") as m:
        _inferred(m, brain)
