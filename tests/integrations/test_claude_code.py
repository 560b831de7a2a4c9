"""``engram hook ...`` fed Claude Code hook payloads (tests/integrations/claude_code/, in the shape
Claude Code sends: the hook's JSON on stdin, the transcript as JSONL), each hook a process of its
own, against a real server. The transcript shapes one by one: test_claude_code_transcripts.py."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb.config import Settings
from engramdb.storage.port import Store
from tests.conftest import LiveServer
from tests.sdk.helpers import LateServer

HERE = Path(__file__).parent / "claude_code"
ALICE = {"userId": "alice", "privacyScope": "private", "sandboxEligible": False}


class Hooks:
    """Runs ``engram hook EVENT`` as Claude Code would: a new process per hook, the payload on stdin."""

    def __init__(self, server: LiveServer, tmp_path: Path, key: str, user: str = "alice") -> None:
        self.transcript = tmp_path / "transcript.jsonl"
        self.transcript.write_text((HERE / "transcripts" / "tool_preamble.jsonl").read_text())
        self.env = {
            **os.environ,
            "ENGRAM_URL": server.url,
            "ENGRAM_KEY": key,
            "ENGRAM_USER_ID": user,
            "ENGRAM_HOOK_PROFILE": str(tmp_path / "hook-profile"),
            "ENGRAM_RECALL_TIMEOUT_MS": "5000",
        }

    def run(
        self, event: str, fixture: str, given: dict[str, Any] | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """Run a hook with a recorded payload (``given`` replaces some of its fields)."""
        recorded = json.loads((HERE / fixture).read_text().replace("TRANSCRIPT", str(self.transcript)))
        payload = json.dumps({**recorded, **(given or {})})
        return subprocess.run(
            [sys.executable, "-m", "engramdb.cli", "hook", event],
            input=payload,
            text=True,
            capture_output=True,
            timeout=120,
            env={**self.env, **env},
        )


@pytest.fixture
def host_key(server: LiveServer) -> str:
    return server.key(role="host", agentId="claude-code", profileId="default")


@pytest.fixture
def hooks(server: LiveServer, tmp_path: Path, host_key: str) -> Hooks:
    return Hooks(server, tmp_path, host_key)


def _episodes(server: LiveServer, key: str, user: str = "alice") -> list[dict[str, Any]]:
    """Every episode of the user's scope (the raw id goes in a body, the server hashes it)."""
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        scope = http.post("/v1/scope/resolve", json={**ALICE, "userId": user}).json()["scope"]
        return [e["event"] for e in http.get("/v1/episodes", params=scope).json()["episodes"]]


def _append_turn(transcript: Path, prompt: str, answer: str) -> None:
    """Append a turn to the transcript as Claude Code writes it: the prompt, then the answer."""
    last = json.loads(transcript.read_text().splitlines()[-1])
    common: dict[str, Any] = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/billing",
        "version": "2.0.37",
    }
    common |= {"sessionId": last["sessionId"], "gitBranch": "main"}
    user = {**common, "parentUuid": last["uuid"], "type": "user", "uuid": str(uuid.uuid4())}
    user |= {"message": {"role": "user", "content": prompt}, "timestamp": "2026-11-30T09:10:00.000Z"}
    message: dict[str, Any] = {
        "id": "msg_01" + uuid.uuid4().hex[:22],
        "type": "message",
        "role": "assistant",
        "model": "claude",
    }
    message |= {"content": [{"type": "text", "text": answer}], "stop_reason": "end_turn", "stop_sequence": None}
    reply = {**common, "parentUuid": user["uuid"], "type": "assistant", "uuid": str(uuid.uuid4())}
    reply |= {"message": message, "requestId": "req_011" + uuid.uuid4().hex[:17], "timestamp": "2026-11-30T09:10:04Z"}
    with transcript.open("a") as out:
        out.write(json.dumps(user) + "\n" + json.dumps(reply) + "\n")


def test_recorded_payloads_make_episodes_and_context(hooks: Hooks, server: LiveServer, host_key: str) -> None:
    stop = hooks.run("stop", "stop.json")
    assert stop.returncode == 0, stop.stderr
    [episode] = _episodes(server, host_key)
    assert episode["userText"] == "Run the billing tests and tell me whether the retry fix works."
    assert (
        episode["assistantText"] == "All 14 billing tests pass and the retry module is lint-clean: the retry fix works."
    )
    assert hooks.run("stop", "stop.json").returncode == 0  # the same turn again: still one episode
    assert len(_episodes(server, host_key)) == 1
    prompt = hooks.run("prompt", "user_prompt_submit.json")
    assert prompt.returncode == 0, prompt.stderr
    output = json.loads(prompt.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit" and "retry fix works" in output["additionalContext"]
    assert output["additionalContext"].startswith("Historical memory follows.")  # marked untrusted history
    # Before compaction: a later turn of the transcript, not stored by a Stop yet, becomes an episode too.
    _append_turn(hooks.transcript, "Also: prod stays in Dublin.", "Understood, prod remains in eu-west-1.")
    assert hooks.run("pre-compact", "pre_compact.json").returncode == 0
    assert [e["turnIndex"] for e in _episodes(server, host_key)] == [1, 0]  # newest first
    end = hooks.run("session-end", "session_end.json")
    assert end.returncode == 0 and end.stdout == ""


def test_a_subagent_hook_neither_writes_nor_recalls(hooks: Hooks, server: LiveServer, host_key: str) -> None:
    assert hooks.run("stop", "stop_subagent.json").returncode == 0
    assert _episodes(server, host_key) == []
    assert hooks.run("stop", "stop.json").returncode == 0  # positive control: the primary's hook does write
    assert len(_episodes(server, host_key)) == 1


def test_a_wrong_key_is_said_and_an_absent_server_blocks_nothing(hooks: Hooks, host_key: str) -> None:
    refused = hooks.run("stop", "stop.json", ENGRAM_KEY=host_key.rsplit(".", 1)[0] + ".wrong")
    assert refused.returncode == 1 and "refused the key" in refused.stderr
    away = hooks.run(
        "prompt", "user_prompt_submit.json", ENGRAM_URL="http://127.0.0.1:9", ENGRAM_RECALL_TIMEOUT_MS="300"
    )
    assert away.returncode == 0 and away.stdout == ""  # fail-open: no context, Claude Code goes on
    queued = hooks.run("stop", "stop.json", ENGRAM_URL="http://127.0.0.1:9", ENGRAM_FLUSH_TIMEOUT_MS="100")
    assert queued.returncode == 0  # the turn waits in the outbox for the next hook that reaches the server


@pytest.mark.parametrize("page", ["docs/integrations.md"])
def test_the_settings_snippets_name_the_hooks_that_exist(page: str) -> None:
    from engramdb.integrations.claude_code import EVENTS

    text = (Path(__file__).resolve().parents[2] / page).read_text()
    snippets = [json.loads(block.split("```", 1)[0]) for block in text.split("```json\n")[1:]]
    [settings] = [s for s in snippets if "hooks" in s]
    commands = {event: entry[0]["hooks"][0]["command"] for event, entry in settings["hooks"].items()}
    assert commands == {name: f"engram hook {command}" for command, name in EVENTS.items()}
    assert {"ENGRAM_URL", "ENGRAM_KEY"} <= set(settings["env"])


RAW = "rowan.quill-7731@example.test"  # a raw user id no table, file or log line holds


@pytest.fixture
def late(settings: Settings, store: Store) -> Iterator[LateServer]:
    live = LateServer(settings, store)
    yield live
    live.stop()


def test_the_first_turn_on_a_fresh_profile_while_the_server_is_down_lands_once_it_is_back(
    late: LateServer, tmp_path: Path, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    key = late.key(role="host", agentId="claude-code", profileId="default")
    hooks = Hooks(late, tmp_path, key, user=RAW)
    down = hooks.run("stop", "stop.json", ENGRAM_FLUSH_TIMEOUT_MS="200")
    assert down.returncode == 0, down.stderr  # issue 31: this turn was dropped (no participant hash yet)
    outbox = b"".join(p.read_bytes() for p in (tmp_path / "hook-profile").iterdir())
    assert RAW.encode() in outbox  # queued with the raw id, on this machine's disk only
    late.start()
    assert hooks.run("session-end", "session_end.json").returncode == 0  # the next hook delivers it
    [offline] = _episodes(late, key, RAW)
    assert offline["assistantText"].startswith("All 14 billing tests pass")
    # The positive control: a turn taken with the server up lands in the same scope.
    _append_turn(hooks.transcript, "Also: prod stays in Dublin.", "Understood, prod remains in eu-west-1.")
    answer = {"last_assistant_message": "Understood, prod remains in eu-west-1."}
    up = hooks.run("stop", "stop.json", answer, ENGRAM_FLUSH_TIMEOUT_MS="5000")
    assert up.returncode == 0, up.stderr
    episodes = _episodes(late, key, RAW)
    assert sorted((e["turnIndex"], e["assistantText"][:14]) for e in episodes) == [
        (0, "All 14 billing"),
        (1, "Understood, pr"),
    ]
    assert {e["participantScopeHash"] for e in episodes} == {offline["participantScopeHash"]}
    assert _episodes(late, key, "alice") == []
    stored = b"".join(p.read_bytes() for p in settings.home.rglob("*") if p.is_file())
    assert RAW.encode() not in stored and RAW not in caplog.text
    assert RAW not in down.stderr + up.stderr
