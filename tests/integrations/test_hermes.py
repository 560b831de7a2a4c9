"""EngramDB as Hermes Agent's memory provider (hermes-agent 0.19.0, pinned): installed by
``engram hermes install``, loaded by Hermes' own plugin loader, in real Hermes agent loops (each
session its own process) against a scripted model and a real EngramDB server."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb.config import Settings
from engramdb.integrations.hermes.provider import EngramMemoryProvider
from engramdb.storage.port import Store
from tests.cli import engram
from tests.conftest import LiveServer
from tests.sdk.chat_server import Reply, ScriptedChat
from tests.sdk.helpers import LateServer

DRIVER = Path(__file__).with_name("hermes_driver.py")
ALICE = {"userId": "alice", "privacyScope": "private", "sandboxEligible": False}


MATCHA = "The user drinks a matcha latte every morning."


def _reply(messages: list[dict[str, Any]]) -> str | Reply:
    last = messages[-1]
    if last.get("role") == "tool":  # the memory tool answered: the turn ends
        return "Noted."
    if str(last.get("content")).startswith("Please remember"):  # the model stores a fact with its tool
        return Reply(tool="engramdb_remember", arguments={"subject": "user", "kind": "morning-drink", "text": MATCHA})
    return "Noted." if "favourite colour is" in str(last.get("content")) else "Let me think."


@pytest.fixture
def chat() -> Iterator[ScriptedChat]:
    scripted = ScriptedChat(_reply)
    yield scripted
    scripted.close()


def _install(home: Path, url: str, chat: ScriptedChat, user: str = "alice") -> Path:
    """A Hermes home with EngramDB installed by ``engram hermes install`` and selected as memory."""
    home.mkdir()
    command = ["hermes", "install", "--hermes-home", str(home), "--url", url, "--agent-id", "hermes"]
    installed = engram(*command)
    assert installed.returncode == 0, installed.stderr
    (home / "engramdb" / "config.json").write_text(json.dumps({"url": url, "agent_id": "hermes", "user_id": user}))
    (home / "config.yaml").write_text(
        f"model:\n  default: scripted\n  provider: custom\n  base_url: {chat.url}\nmemory:\n  provider: engramdb\n"
    )
    return home


@pytest.fixture
def hermes_home(tmp_path: Path, server: LiveServer, chat: ScriptedChat) -> Path:
    return _install(tmp_path / "hermes", server.url, chat)


@pytest.fixture
def host_key(server: LiveServer) -> str:
    return server.key(role="host", agentId="hermes", profileId="default")


def _session(home: Path, key: str, chat: ScriptedChat, session_id: str, message: str, **env: str) -> dict[str, Any]:
    return dict(json.loads(_run(home, key, chat, session_id, message, **env).stdout.strip().splitlines()[-1]))


def _run(
    home: Path, key: str, chat: ScriptedChat, session_id: str, message: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """One Hermes session in its own process (hermes_driver.py)."""
    run = subprocess.run(
        [sys.executable, str(DRIVER), session_id, message],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=home,
        env={**os.environ, "HERMES_HOME": str(home), "ENGRAM_KEY": key, "CHAT_URL": chat.url, **env},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def _episodes(server: LiveServer, key: str, query: str) -> list[str]:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}) as http:
        found = http.post("/v1/recall", json={"query": query, "scope": ALICE, "sources": ["EPISODE"]}).json()
    return [m["text"] for m in found["memories"]]


def test_the_plugin_folder_is_what_hermes_loads(hermes_home: Path) -> None:
    folder = hermes_home / "plugins" / "engramdb"
    assert sorted(p.name for p in folder.iterdir()) == ["__init__.py", "config_schema.py", "plugin.yaml"]
    probe = (
        "from plugins.memory import discover_memory_providers, load_memory_provider; "
        "from plugins.memory.config_schema import get_provider_config_schema; "
        "print([n for n, _, ok in discover_memory_providers() if ok]); "
        "print(type(load_memory_provider('engramdb')).__name__); "
        "print([f.key for f in get_provider_config_schema('engramdb').fields])"
    )
    seen = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HERMES_HOME": str(hermes_home), "ENGRAM_KEY": "egm.x.y.z"},
    )
    available, loaded, keys = seen.stdout.strip().splitlines()[-3:]
    assert "'engramdb'" in available and loaded == "EngramMemoryProvider", seen.stderr[-2000:]
    assert keys == "['url', 'api_key', 'agent_id', 'user_id', 'recall_timeout_ms', 'extraction']"


def test_a_hermes_session_recalls_what_an_earlier_session_said(
    hermes_home: Path, host_key: str, chat: ScriptedChat, server: LiveServer
) -> None:
    first = _session(hermes_home, host_key, chat, "session-one", "My favourite colour is teal.")
    assert first["providers"] == ["engramdb"] and first["reply"] == "Noted."
    assert "<memory-context>" not in json.dumps(chat.requests[-1]["messages"])  # nothing to recall yet
    assert any("teal" in text for text in _episodes(server, host_key, "favourite colour teal"))
    second = _session(hermes_home, host_key, chat, "session-two", "Which colour do I like best?")
    assert second["providers"] == ["engramdb"]
    sent = json.dumps(chat.requests[-1]["messages"])
    assert "<memory-context>" in sent and "My favourite colour is teal." in sent  # recalled into the turn


def test_a_fact_the_model_stored_with_its_tool_is_recalled_in_a_later_session(
    hermes_home: Path, host_key: str, chat: ScriptedChat, server: LiveServer
) -> None:
    first = _session(
        hermes_home,
        host_key,
        chat,
        "facts-1",
        "Please remember what I drink: matcha, each morning.",
        HERMES_TOOLSETS="memory",
    )
    assert first["reply"] == "Noted."
    offered = [t["function"]["name"] for t in chat.requests[-2].get("tools", [])]
    assert {"engramdb_recall", "engramdb_remember"} <= set(offered)
    [answer] = [m for m in chat.requests[-1]["messages"] if m.get("role") == "tool"]
    fact_id = json.loads(answer["content"])["factId"]  # the tool's answer, as Hermes handed it back
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {host_key}"}) as http:
        alice = http.post("/v1/scope/resolve", json=ALICE).json()["scope"]  # a raw id goes in bodies only
        fact = http.get(f"/v1/facts/{fact_id}", params=alice).json()
    # The model's fact is derived: in alice's scope (fixed by the session, not by the model), waiting for review.
    assert fact["event"]["text"] == MATCHA and fact["status"] == "pending_review" and fact["origin"] == "derived"
    asked = "What do I drink in the morning?"
    _session(hermes_home, host_key, chat, "facts-2", asked)
    sent = json.dumps(chat.requests[-1]["messages"])
    assert "<memory-context>" in sent and MATCHA not in sent  # the turn is recalled; the fact waits for review
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {server.key(role='admin')}"}) as http:
        assert http.post(f"/v1/review/{fact_id}/approve", json={}).status_code == 200
    _session(hermes_home, host_key, chat, "facts-3", asked)
    sent = json.dumps(chat.requests[-1]["messages"])
    assert "source=MEMORY_FACT" in sent and MATCHA in sent  # approved, the fact is recalled into the turn


def test_a_cron_run_does_not_write(hermes_home: Path, host_key: str, chat: ScriptedChat, server: LiveServer) -> None:
    _session(hermes_home, host_key, chat, "cron-1", "My favourite colour is red.", HERMES_PLATFORM="cron")
    assert _episodes(server, host_key, "favourite colour red") == []
    _session(hermes_home, host_key, chat, "cli-1", "My favourite colour is red.")  # positive control
    assert any("red" in text for text in _episodes(server, host_key, "favourite colour red"))


def _provider(home: Path, key: str, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> EngramMemoryProvider:
    monkeypatch.setenv("ENGRAM_KEY", key)
    provider = EngramMemoryProvider()
    provider.initialize("s-1", hermes_home=str(home), **{"platform": "cli", "agent_context": "primary", **kwargs})
    return provider


def test_subagent_and_group_contexts_neither_write_nor_recall(
    hermes_home: Path, host_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for context in (
        {"agent_context": "subagent"},
        {"agent_context": "flush"},
        {"chat_type": "group"},
        {"gateway_session_key": "agent:main:telegram:group:42"},
    ):
        provider = _provider(hermes_home, host_key, monkeypatch, **context)
        provider.sync_turn("My favourite colour is blue.", "Noted.")
        assert provider.session is not None and provider.session.delivery.pending == 0, context
        assert provider.get_tool_schemas() == [] and provider.prefetch("colour") == ""
        provider.shutdown()
    primary = _provider(hermes_home, host_key, monkeypatch)  # positive control: the primary context writes
    primary.sync_turn("My favourite colour is blue.", "Noted.")
    assert primary.session is not None and primary.session.delivery.pending + primary.session.end_session(5) >= 1
    assert [t["name"] for t in primary.get_tool_schemas()] == ["engramdb_recall", "engramdb_remember"]
    primary.shutdown()


def test_extraction_configured_queues_each_turn_and_a_server_without_a_model_is_said_once(
    hermes_home: Path, host_key: str, monkeypatch: pytest.MonkeyPatch, server: LiveServer
) -> None:
    plain = _provider(hermes_home, host_key, monkeypatch)  # the control: extraction off by default
    assert plain.session is not None and plain.session.extract is False
    plain.shutdown()
    config = hermes_home / "engramdb" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "extraction": "true"}))
    provider = _provider(hermes_home, host_key, monkeypatch)
    assert provider.session is not None and provider.session.extract is True
    provider.sync_turn("My favourite colour is olive.", "Noted.")
    provider.on_session_end([])
    # This server has no model: the turn is stored all the same, and the provider says why once.
    assert provider.extraction_note and "model_not_configured" in provider.extraction_note
    assert any("olive" in text for text in _episodes(server, host_key, "favourite colour olive"))
    provider.shutdown()


def test_availability_needs_no_network_and_a_refused_key_raises_at_initialize(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(hermes_home))
    monkeypatch.delenv("ENGRAM_KEY", raising=False)
    assert EngramMemoryProvider().is_available() is False  # no key
    monkeypatch.setenv("ENGRAM_KEY", "egm.default.nokey.secret")
    monkeypatch.setenv("ENGRAM_URL", "http://127.0.0.1:9")  # nothing listens: is_available does not ask
    assert EngramMemoryProvider().is_available() is True
    monkeypatch.delenv("ENGRAM_URL")
    from engramdb.errors import AuthenticationError

    with pytest.raises(AuthenticationError):
        EngramMemoryProvider().initialize("s-2", hermes_home=str(hermes_home), platform="cli", agent_context="primary")


def test_the_config_schema_is_hermes_own(hermes_home: Path) -> None:
    fields = {f["key"]: f for f in EngramMemoryProvider().get_config_schema()}
    assert fields["api_key"]["secret"] and fields["api_key"]["env_var"] == "ENGRAM_KEY"
    EngramMemoryProvider().save_config({"agent_id": "ops", "api_key": "never-written"}, str(hermes_home))
    stored = json.loads((hermes_home / "engramdb" / "config.json").read_text())
    assert stored["agent_id"] == "ops" and "api_key" not in stored


RAW = "rowan.quill-7731@example.test"  # a raw user id no table, file or log line of the server holds


def test_turns_synced_while_engramdb_is_away_at_session_start_land_once_it_is_back(
    tmp_path: Path, settings: Settings, store: Store, chat: ScriptedChat, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    late = LateServer(settings, store)  # down: its port refuses connections until start()
    try:
        home = _install(tmp_path / "hermes", late.url, chat, user=RAW)
        key = late.key(role="host", agentId="hermes", profileId="default")
        away = _run(home, key, chat, "away-1", "My favourite colour is teal.")
        assert json.loads(away.stdout.strip().splitlines()[-1])["providers"] == ["engramdb"]
        outbox = b"".join(p.read_bytes() for p in (home / "engramdb" / "outbox").iterdir())
        assert RAW.encode() in outbox  # issue 31: this turn was dropped; now it waits, on this machine only
        late.start()
        back = _run(home, key, chat, "back-2", "My favourite colour is rowan red.")  # the positive control
        with httpx.Client(base_url=late.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
            scope = http.post("/v1/scope/resolve", json={**ALICE, "userId": RAW}).json()["scope"]
            episodes = [e["event"] for e in http.get("/v1/episodes", params=scope).json()["episodes"]]
            alice = http.post("/v1/scope/resolve", json=ALICE).json()["scope"]
            assert http.get("/v1/episodes", params=alice).json()["episodes"] == []
        assert sorted((e["externalSessionId"], e["userText"]) for e in episodes) == [
            ("away-1", "My favourite colour is teal."),
            ("back-2", "My favourite colour is rowan red."),
        ]
        assert {e["participantScopeHash"] for e in episodes} == {scope["participantScopeHash"]}
        assert RAW.encode() not in b"".join(p.read_bytes() for p in settings.home.rglob("*") if p.is_file())
        assert RAW not in caplog.text and RAW not in away.stderr + back.stderr
    finally:
        late.stop()
