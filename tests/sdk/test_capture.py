"""Capture: only the latest completed pair, bounded and normalised, never secrets or tool text."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import pytest

from engramdb.sdk import Client
from engramdb.sdk.capture import TURN_CHARS, Captured, Refused, clean_pair, latest_pair, redact
from engramdb.sdk.outbox.store import FILE_NAME
from engramdb.sdk.session import MemorySession
from tests.conftest import LiveServer
from tests.sdk.conftest import SessionFactory
from tests.sdk.helpers import FaultProxy

# Fake secrets, assembled so that the source itself holds no secret-shaped literal.
FAKE = {
    "openai": "sk-" + "proj-" + "Zx81Qw7Er6Ty5Ui4Op3As2Df1Gh0Jk",
    "anthropic": "sk-" + "ant-api03-" + "q1W2e3R4t5Y6u7I8o9P0a1S2d3F4g5H6",
    "github": "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "aws": "AK" + "IA" + "QWERTYUIOP123456",
    "google": "AI" + "za" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "stripe": "sk" + "_live_" + "51HqWertyUiop12345678",
    "slack": "xo" + "xb-" + "123456789012-abcdefABCDEF",
    "engram": "egm." + "default.k1a2b3c4d5." + "Zq8-Wx7_Yv6Ut5",
    "jwt": "ey"
    + "JhbGciOiJIUzI1NiJ9."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "bearer": "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "db_password": "Pa55w0rd!" + "Secret",
    "hunter": "hunter2" + "!x",
    "entropy": "Q2hhbmdlTWVOb3dQbGVhc2VUaGlzSXNBVGVzdA" + "9xY7",
    "env_value": "s3cr3t-" + "from-dotenv",
}
PRIVATE_KEY = (
    "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
    "AAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACDx\n-----END " + "OPENSSH PRIVATE KEY-----"
)
SECRET_TEXTS = {
    "openai": f"My key is {FAKE['openai']}, use it for the script.",
    "anthropic": f"Set ANTHROPIC to {FAKE['anthropic']} please",
    "github": f"push with {FAKE['github']} to the repo",
    "aws": f"the access key id {FAKE['aws']} belongs to staging",
    "google": f"maps key: {FAKE['google']}",
    "stripe": f"billing uses {FAKE['stripe']}",
    "slack": f"the bot token {FAKE['slack']} posts alerts",
    "engram": f"the memory key is {FAKE['engram']}",
    "jwt": f"session cookie {FAKE['jwt']} expired",
    "bearer": f"curl -H 'Authorization: Bearer {FAKE['bearer']}' the api",
    "db_password": f"connect to postgres://admin:{FAKE['db_password']}@db.internal:5432/app",
    "hunter": f"my password is {FAKE['hunter']} for the wiki",
    "entropy": f"the signing salt {FAKE['entropy']} must not leak",
    "env_value": f"here is my .env:\nexport DATABASE_URL=x\nAPI_SECRET={FAKE['env_value']}\nDEBUG=1\n",
    "private_key": f"my deploy key:\n{PRIVATE_KEY}\nkeep it safe",
}
OUTPUT_TEXTS = {
    "fenced_shell": "I ran it:\n```bash\n$ ls -la\ntotal 8\n-rw-r--r-- 1 alice staff 0 SECRET_LISTING\n```\nwhat now?",
    "fenced_plain": "Output was:\n```\nSECRET_LISTING line 1\nline 2\n```",
    "prompt_lines": "look at this\n$ cat config.yml\nSECRET_LISTING: yes\nport: 80\n\nthanks",
    "user_prompt": "alice@laptop:~/code$ make test\nSECRET_LISTING passed\n\nok?",
    "traceback": 'It crashed:\nTraceback (most recent call last):\n  File "x.py", line 1\n    SECRET_LISTING()\n'
    "NameError: name 'SECRET_LISTING' is not defined\n",
}
PATH_TEXTS = {
    "home": "the file is at /home/alice/SECRET_PATH/notes.txt today",
    "mac": "open /Users/alice/SECRET_PATH/Desktop/plan.md",
    "tilde": "see ~/SECRET_PATH/projects/x.py",
    "etc": "read /etc/SECRET_PATH/passwd",
    "windows": r"saved to C:\Users\alice\SECRET_PATH\report.docx",
    "file_url": "file:///var/SECRET_PATH/log.txt",
}


def _msg(role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, **extra}


def test_only_the_latest_completed_pair_is_kept() -> None:
    history = [
        _msg("system", "SYSTEM-PROMPT-MARKER you are an agent"),
        _msg("developer", "DEVELOPER-MARKER rules"),
        _msg("user", "first question"),
        _msg("assistant", "first answer"),
        _msg("user", "What is the weather in Oslo?"),
        _msg("assistant", None, tool_calls=[{"id": "1", "function": {"name": "weather", "arguments": "TOOL-ARGS"}}]),
        _msg("tool", "TOOL-RESULT-MARKER 12 degrees", tool_call_id="1"),
        _msg("assistant", "It is 12 degrees in Oslo."),
        _msg("user", "and tomorrow?"),  # not answered yet: not a completed turn
    ]
    assert latest_pair(history) == ("What is the weather in Oslo?", "It is 12 degrees in Oslo.")


@pytest.mark.parametrize(
    "last",
    [
        _msg("assistant", "half an ans", finish_reason="length"),
        _msg("assistant", "oops", error="upstream 500"),
        _msg("assistant", "", status="completed"),
        _msg("assistant", "cancelled", status="cancelled"),
        _msg("assistant", "streaming...", partial=True),
    ],
)
def test_failed_or_partial_turns_are_ignored(last: dict[str, Any]) -> None:
    history = [_msg("user", "q1"), _msg("assistant", "a1"), _msg("user", "q2"), last]
    assert latest_pair(history) == ("q1", "a1")
    assert latest_pair([_msg("user", "q2"), last]) is None


def test_no_pair_without_a_user_message_and_content_parts_are_read() -> None:
    assert latest_pair([]) is None
    assert latest_pair([_msg("system", "s"), _msg("assistant", "hello")]) is None
    assert latest_pair([_msg("tool", "r"), _msg("assistant", "hello")]) is None
    parts = [
        {"type": "text", "text": "Describe"},
        {"type": "image_url", "image_url": {"url": "IMG"}},
        {"type": "text", "text": "this image"},
    ]
    assert latest_pair([_msg("user", parts), _msg("assistant", "A cat.")]) == ("Describe\nthis image", "A cat.")


@pytest.mark.parametrize("name", sorted(SECRET_TEXTS))
def test_fake_secrets_are_redacted(name: str) -> None:
    text, kinds = redact(SECRET_TEXTS[name])
    assert kinds, text
    for secret in [*FAKE.values(), "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"]:
        assert secret not in text
    assert "[redacted:" in text


@pytest.mark.parametrize("name", sorted(OUTPUT_TEXTS))
def test_command_output_is_redacted(name: str) -> None:
    text, kinds = redact(OUTPUT_TEXTS[name])
    assert "SECRET_LISTING" not in text and "command_output" in kinds, text


@pytest.mark.parametrize("name", sorted(PATH_TEXTS))
def test_local_paths_are_redacted(name: str) -> None:
    text, kinds = redact(PATH_TEXTS[name])
    assert "SECRET_PATH" not in text and "path" in kinds, text


def test_ordinary_text_survives() -> None:
    ordinary = (
        "The token budget is 4096 and the API lives at https://example.com/docs/v1/episodes; "
        "call POST /v1/episodes.\n```python\nprint('hello')\n```\nUse TypeScript for billing."
    )
    assert redact(ordinary) == (ordinary, ())


def test_text_is_normalised_and_bounded() -> None:
    captured = clean_pair("  Cafe\u0301\r\nline two   \r\n\n\n\nend\x00\x07 ", "x" * 10_000)
    assert isinstance(captured, Captured)
    assert captured.user == unicodedata.normalize("NFC", "Caf\u00e9\nline two\n\nend")
    assert len(captured.assistant) == TURN_CHARS and captured.assistant.endswith("…")
    assert len(captured.summary) <= 240 and "\n" not in captured.summary


def test_a_pair_with_nothing_left_is_refused() -> None:
    assert isinstance(clean_pair(FAKE["openai"], "ok, stored"), Refused)
    assert isinstance(clean_pair("hello", "   "), Refused)
    assert isinstance(clean_pair("```\nonly output\n```", "fine"), Refused)


def test_secrets_paths_and_tool_text_never_reach_the_outbox_or_the_server(
    make_session: SessionFactory, proxy: FaultProxy, profile: Path, server: LiveServer, agent_key: str
) -> None:
    session: MemorySession = make_session(proxy.url, api_key=agent_key)
    user = "\n".join(
        [
            *SECRET_TEXTS.values(),
            *OUTPUT_TEXTS.values(),
            *PATH_TEXTS.values(),
            "Remember that the billing service is written in TypeScript.",
        ]
    )
    event_id = session.after_turn(user, f"Understood; I will not repeat {FAKE['github']}.")
    assert event_id is not None, session.last_skip
    compacted = [
        _msg("system", "SYSTEM-PROMPT-MARKER"),
        _msg("user", "Which database do we use?"),
        _msg("assistant", None, tool_calls=[{"id": "1", "function": {"name": "q", "arguments": "TOOL-ARGS"}}]),
        _msg("tool", "TOOL-RESULT-MARKER postgres", tool_call_id="1"),
        _msg("assistant", "We use PostgreSQL."),
    ]
    assert session.before_compaction(compacted) is not None
    assert session.outbox is not None and session.outbox.flush(10) and session.outbox.dead_letters() == []
    sent = repr([s.body for s in proxy.seen]) + (profile / FILE_NAME).read_bytes().decode("latin-1")
    with Client(server.url, agent_key) as client:
        sent += client.get_episode(event_id).model_dump_json()
    for marker in [
        *FAKE.values(),
        "SECRET_LISTING",
        "SECRET_PATH",
        "SYSTEM-PROMPT-MARKER",
        "TOOL-RESULT-MARKER",
        "TOOL-ARGS",
        "BEGIN OPENSSH",
    ]:
        assert marker not in sent, marker
    assert "billing service is written in TypeScript" in sent and "We use PostgreSQL." in sent


def test_lone_surrogates_become_replacement_characters() -> None:
    captured = clean_pair("half of a pair: \ud83d here", "and a low one \udc00 too")
    assert isinstance(captured, Captured)
    assert captured.user == "half of a pair: \ufffd here" and captured.assistant == "and a low one \ufffd too"
    assert clean_pair("a whole pair \U0001f600 stays", "ok").user == "a whole pair \U0001f600 stays"  # type: ignore[union-attr]


def test_a_turn_with_a_lone_surrogate_is_stored_not_raised(
    make_session: SessionFactory, server: LiveServer, agent_key: str
) -> None:
    session: MemorySession = make_session()
    event_id = session.after_turn("Remember the deploy window \ud800 is Friday.", "Noted \udfff, Friday.")
    assert event_id is not None, session.last_skip
    assert session.outbox is not None and session.outbox.flush(10) and session.outbox.dead_letters() == []
    with Client(server.url, agent_key) as client:
        stored = client.get_episode(event_id)
    assert stored.event["userText"] == "Remember the deploy window \ufffd is Friday."
