"""Claude Code's transcripts, shape by shape (tests/integrations/claude_code/transcripts/, written in
Claude Code's JSONL format: one entry per line, an assistant message one content block per entry,
tool results as user entries, ``isSidechain``, ``isMeta``, ``isCompactSummary``, ``toolUseResult``,
a ``compact_boundary`` system entry), read by the hooks and stored by ``engram hook stop`` against
a real server: exactly one episode per completed turn, the person's prompt and the final answer.

The canaries ``ZZ...`` mark what must never be stored: a tool's output, a thinking block, a
compaction summary, a subagent's sidechain, an expanded slash command.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb.integrations.claude_code import HookSettings, read_turns, run_hook, turn_to_store
from tests.conftest import LiveServer

TRANSCRIPTS = Path(__file__).parent / "claude_code" / "transcripts"
SESSION = "2f1c9a7e-5d44-4e0b-9a61-7d2b1c3e8f10"
ALICE = {"userId": "alice", "privacyScope": "private", "sandboxEligible": False}
CANARIES = ("ZZTOOLOUTPUT", "ZZTHINKING", "ZZSUMMARY", "ZZSIDECHAIN", "ZZMETA", "This session is being continued")
PREAMBLES = ("Let me", "I'll", "The tests pass. I'll")


@dataclass(frozen=True)
class Shape:
    """A transcript, the Stop payload's ``last_assistant_message`` (None: a payload without one,
    as Claude Code sent before it had the field), and the (prompt, answer) the hook stores."""

    name: str
    last_message: str | None
    stored: tuple[str, str] | None


SHAPES = [
    Shape(
        "plain",
        "Understood: staging deploys from eu-central-1 (Frankfurt) from now on.",
        (
            "Staging moves to Frankfurt: deploy it from eu-central-1 from now on.",
            "Understood: staging deploys from eu-central-1 (Frankfurt) from now on.",
        ),
    ),
    Shape(  # issue 31: the preamble ("Let me run the billing tests first.") was stored as the answer
        "tool_preamble",
        None,
        (
            "Run the billing tests and tell me whether the retry fix works.",
            "All 14 billing tests pass and the retry module is lint-clean: the retry fix works.",
        ),
    ),
    Shape(
        "thinking",
        "Use the notifications queue for invoice emails: it is the low-latency one.",
        (
            "Which queue should the invoice emails use?",
            "Use the notifications queue for invoice emails: it is the low-latency one.",
        ),
    ),
    Shape("interrupted", "I'll start by collecting the merged changes since 4.1.", None),  # issue 31
    Shape("interrupted_tool_use", "I'll rebuild the index now.", None),
    Shape("rejected", "Understood, I won't touch production. Shall I drop it on staging?", None),  # issue 31
    Shape(
        "compact_manual",
        "Noted: production stays in eu-west-1 (Dublin).",
        ("And production stays in eu-west-1 (Dublin).", "Noted: production stays in eu-west-1 (Dublin)."),
    ),
    Shape(  # issue 31: the compaction summary was stored as the person's words
        "compact_auto",
        None,
        (
            "Find every caller of charge_card and make them pass an idempotency key.",
            "Both callers of charge_card now pass an idempotency key (billing/api.py and billing/jobs.py).",
        ),
    ),
    Shape(
        "slash_commands",
        "The retry change looks correct and is tested; I'd only rename retry() to retry_charge().",
        (
            "/review the billing retry change",
            "The retry change looks correct and is tested; I'd only rename retry() to retry_charge().",
        ),
    ),
    Shape(
        "sidechain",
        "Staging deploys from us-east-1 today (deploy/staging.yaml, line 3).",
        (
            "Which region does staging deploy from today?",
            "Staging deploys from us-east-1 today (deploy/staging.yaml, line 3).",
        ),
    ),
    Shape(  # issue 31: last_assistant_message was ignored; here the transcript's last line is half-written
        "half_written",
        "No: last night's invoice export succeeded with 1,204 invoices.",
        (
            "Is the nightly invoice export still failing?",
            "No: last night's invoice export succeeded with 1,204 invoices.",
        ),
    ),
    Shape(
        "several_turns",
        "Noted: invoices are archived after seven years.",
        ("Invoices are archived after seven years.", "Noted: invoices are archived after seven years."),
    ),
    Shape("api_error", None, None),
]


def stop_payload(transcript: Path, last_message: str | None, **extra: Any) -> dict[str, Any]:
    """A Stop hook's input, as Claude Code sends it."""
    payload: dict[str, Any] = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": "/home/dev/billing",
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    if last_message is not None:
        payload["last_assistant_message"] = last_message
    return {**payload, **extra}


def hook(event: str, payload: dict[str, Any], settings: HookSettings) -> int:
    """Run one hook in this process, as ``engram hook EVENT`` runs it."""
    return run_hook(event, io.StringIO(json.dumps(payload)), io.StringIO(), settings)


def stored(server: LiveServer, key: str) -> list[tuple[int, str, str]]:
    """Every episode of alice's scope: (turnIndex, userText, assistantText), oldest turn first."""
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        scope = http.post("/v1/scope/resolve", json=ALICE).json()["scope"]
        page = http.get("/v1/episodes", params=scope).json()["episodes"]
    return sorted((e["event"]["turnIndex"], e["event"]["userText"], e["event"]["assistantText"]) for e in page)


@pytest.fixture
def key(server: LiveServer) -> str:
    return server.key(role="host", agentId="claude-code", profileId="default")


@pytest.fixture
def settings_for(server: LiveServer, key: str, tmp_path: Path) -> HookSettings:
    return HookSettings(server.url, key, "claude-code", "default", "alice", tmp_path / "hook-profile", 5.0, 5.0)


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_each_shape_reads_as_the_turn_the_hook_stores(shape: Shape) -> None:
    path = TRANSCRIPTS / f"{shape.name}.jsonl"
    chosen = turn_to_store("stop", stop_payload(path, shape.last_message), read_turns(path))
    got = (chosen[0].prompt, chosen[1]) if chosen else None
    assert got == shape.stored
    if got is not None:
        assert not [c for c in CANARIES if c in got[0] + got[1]]
        assert not got[1].startswith(PREAMBLES)


def test_every_fixture_is_a_claude_code_transcript() -> None:
    names = sorted(p.stem for p in TRANSCRIPTS.glob("*.jsonl"))
    assert names == sorted(s.name for s in SHAPES) and len(names) >= 10
    for path in TRANSCRIPTS.glob("*.jsonl"):
        lines = path.read_text().splitlines()
        entries = [json.loads(line) for line in lines if path.stem != "half_written" or line != lines[-1]]
        for entry in (e for e in entries if e["type"] in ("user", "assistant", "system")):
            assert {"uuid", "parentUuid", "isSidechain", "sessionId", "timestamp", "cwd", "version"} <= set(entry)
            if entry["type"] != "system":
                assert entry["message"]["role"] == entry["type"], path.name
        kinds = {b["type"] for e in entries if e["type"] == "assistant" for b in e["message"]["content"]}
        assert kinds <= {"text", "thinking", "tool_use"}, path.name
    with pytest.raises(ValueError):  # the half-written line really is cut
        json.loads((TRANSCRIPTS / "half_written.jsonl").read_text().splitlines()[-1])


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_the_stop_hook_stores_exactly_the_completed_turn_of_each_shape(
    shape: Shape, server: LiveServer, key: str, settings_for: HookSettings
) -> None:
    path = TRANSCRIPTS / f"{shape.name}.jsonl"
    assert hook("stop", stop_payload(path, shape.last_message), settings_for) == 0
    assert hook("stop", stop_payload(path, shape.last_message), settings_for) == 0  # a retry stores nothing more
    episodes = stored(server, key)
    if shape.stored is None:
        assert episodes == []
        return
    [(turn, user, answer)] = episodes
    assert (user, answer) == shape.stored and turn == read_turns(path)[-1].ordinal
    assert not [c for c in CANARIES if c in user + answer]


def _lines(path: Path, count: int, into: Path) -> Path:
    into.write_text("\n".join(path.read_text().splitlines()[:count]) + "\n")
    return into


def test_several_turns_each_stored_once_by_its_own_stop(
    server: LiveServer, key: str, settings_for: HookSettings, tmp_path: Path
) -> None:
    path = TRANSCRIPTS / "several_turns.jsonl"
    live = tmp_path / "transcript.jsonl"
    for lines in (2, 4, 6):  # the transcript as it stood when each turn's Stop ran
        turns = read_turns(_lines(path, lines, live))
        assert hook("stop", stop_payload(live, turns[-1].answer), settings_for) == 0
    assert (
        hook(
            "pre-compact",
            {**stop_payload(live, None), "hook_event_name": "PreCompact", "trigger": "auto"},
            settings_for,
        )
        == 0
    )
    # A Stop hook of another tool made Claude go on: its reason comes back as a user entry (not
    # a prompt of the person's), Claude answers again, and the second Stop of the turn stores nothing more.
    last = json.loads(live.read_text().splitlines()[-1])
    feedback = {**last, "type": "user", "uuid": "6f0e4c1a-2b3d-4e5f-8a9b-0c1d2e3f4a5b", "parentUuid": last["uuid"]}
    feedback["message"] = {"role": "user", "content": "Stop hook feedback: say where the archive lives"}
    more = {**last, "uuid": "7a1b2c3d-4e5f-4a6b-9c8d-1e2f3a4b5c6d", "parentUuid": feedback["uuid"]}
    more["message"] = {
        **last["message"],
        "id": "msg_01Continued",
        "content": [{"type": "text", "text": "In cold storage."}],
    }
    with live.open("a") as transcript:
        transcript.write(json.dumps(feedback) + "\n" + json.dumps(more) + "\n")
    assert hook("stop", stop_payload(live, "In cold storage.", stop_hook_active=True), settings_for) == 0
    assert stored(server, key) == [
        (0, "Our billing service is written in Go.", "Noted: the billing service is in Go."),
        (1, "The on-call rotation changes every Monday.", "Noted: on-call rotates every Monday."),
        (2, "Invoices are archived after seven years.", "Noted: invoices are archived after seven years."),
    ]


def test_a_fresh_profile_stores_only_the_last_turn_of_a_long_transcript(
    server: LiveServer, key: str, settings_for: HookSettings
) -> None:
    path = TRANSCRIPTS / "several_turns.jsonl"
    assert hook("stop", stop_payload(path, None), settings_for) == 0
    assert stored(server, key) == [
        (2, "Invoices are archived after seven years.", "Noted: invoices are archived after seven years.")
    ]


def test_pre_compact_stores_the_last_answered_turn_and_never_the_summary(
    server: LiveServer, key: str, settings_for: HookSettings, tmp_path: Path
) -> None:
    live = tmp_path / "transcript.jsonl"
    manual = TRANSCRIPTS / "compact_manual.jsonl"
    _lines(manual, 2, live)  # /compact typed: PreCompact runs before the boundary is written
    pre = {**stop_payload(live, None), "hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": ""}
    assert hook("pre-compact", pre, settings_for) == 0
    live.write_text(manual.read_text())
    assert hook("stop", stop_payload(live, None), settings_for) == 0
    assert [(t, u) for t, u, _ in stored(server, key)] == [
        (0, "Staging deploys from eu-central-1 from now on."),
        (2, "And production stays in eu-west-1 (Dublin)."),
    ]
    # Auto-compaction in the middle of a turn: PreCompact finds no answered turn, Stop stores the turn.
    auto = TRANSCRIPTS / "compact_auto.jsonl"
    other = {**pre, "session_id": "9b0c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d", "trigger": "auto"}
    assert hook("pre-compact", {**other, "transcript_path": str(_lines(auto, 4, live))}, settings_for) == 0
    assert len(stored(server, key)) == 2
    assert hook("stop", {**stop_payload(auto, None), "session_id": other["session_id"]}, settings_for) == 0
    users = [u for _, u, _ in stored(server, key)]
    assert "Find every caller of charge_card and make them pass an idempotency key." in users
    assert not [u for u in users if "ZZSUMMARY" in u or "continued from a previous" in u]
