"""``engram hook ...`` fed Claude Code hook payloads (tests/integrations/claude_code/, in the shape
Claude Code sends: the hook's JSON on stdin, the transcript as JSONL), against a real server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb.integrations.claude_code import transcript_messages
from tests.conftest import LiveServer

HERE = Path(__file__).parent / "claude_code"
ALICE = {"userId": "alice", "privacyScope": "private", "sandboxEligible": False}


class Hooks:
    """Runs ``engram hook EVENT`` as Claude Code would: a new process per hook, the payload on stdin."""

    def __init__(self, server: LiveServer, tmp_path: Path, key: str) -> None:
        self.transcript = tmp_path / "transcript.jsonl"
        self.transcript.write_text((HERE / "transcript.jsonl").read_text())
        self.env = {
            **os.environ,
            "ENGRAM_URL": server.url,
            "ENGRAM_KEY": key,
            "ENGRAM_USER_ID": "alice",
            "ENGRAM_HOOK_PROFILE": str(tmp_path / "hook-profile"),
            "ENGRAM_RECALL_TIMEOUT_MS": "5000",
        }

    def run(self, event: str, fixture: str, **env: str) -> subprocess.CompletedProcess[str]:
        payload = (HERE / fixture).read_text().replace("TRANSCRIPT", str(self.transcript))
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


def _episodes(server: LiveServer, key: str, query: str) -> list[dict[str, Any]]:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}) as http:
        found = http.post("/v1/recall", json={"query": query, "scope": ALICE, "sources": ["EPISODE"], "limit": 20})
    return [m for m in found.json()["memories"]]


def test_the_transcript_reads_as_prompts_answers_and_tool_results() -> None:
    messages = transcript_messages(HERE / "transcript.jsonl")
    assert [m["role"] for m in messages] == ["user", "tool", "assistant"]  # thinking and tool calls carry no text
    assert messages[-1]["content"] == "Done: staging now deploys from eu-central-1 (Frankfurt)."
    assert not [m for m in messages if "ZZSUBAGENT" in m["content"] or "ZZMETA" in m["content"]]


def test_recorded_payloads_make_episodes_and_context(hooks: Hooks, server: LiveServer, host_key: str) -> None:
    stop = hooks.run("stop", "stop.json")
    assert stop.returncode == 0, stop.stderr
    [episode] = _episodes(server, host_key, "staging region Frankfurt")
    assert "Staging moves to Frankfurt" in episode["text"] and "eu-central-1 (Frankfurt)" in episode["text"]
    assert "ZZTOOLOUTPUT" not in episode["text"] and "ZZSUBAGENT" not in episode["text"]
    assert hooks.run("stop", "stop.json").returncode == 0  # the same turn again: still one episode
    assert len(_episodes(server, host_key, "staging region Frankfurt")) == 1
    prompt = hooks.run("prompt", "user_prompt_submit.json")
    assert prompt.returncode == 0, prompt.stderr
    output = json.loads(prompt.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit" and "Frankfurt" in output["additionalContext"]
    assert output["additionalContext"].startswith("Historical memory follows.")  # marked untrusted history
    # Before compaction: a later pair of the transcript becomes an episode too.
    with hooks.transcript.open("a") as transcript:
        for line in (
            {"type": "user", "message": {"role": "user", "content": "Also: prod stays in Dublin."}},
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Understood, prod remains in eu-west-1."}],
                },
            },
        ):
            transcript.write(json.dumps(line) + "\n")
    assert hooks.run("pre-compact", "pre_compact.json").returncode == 0
    assert any("Dublin" in e["text"] for e in _episodes(server, host_key, "prod Dublin"))
    end = hooks.run("session-end", "session_end.json")
    assert end.returncode == 0 and end.stdout == ""


def test_a_subagent_hook_neither_writes_nor_recalls(hooks: Hooks, server: LiveServer, host_key: str) -> None:
    assert hooks.run("stop", "stop_subagent.json").returncode == 0
    assert _episodes(server, host_key, "staging region Frankfurt") == []
    assert hooks.run("stop", "stop.json").returncode == 0  # positive control: the primary's hook does write
    assert len(_episodes(server, host_key, "staging region Frankfurt")) == 1


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
