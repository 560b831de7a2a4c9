"""Claude Code's hooks: ``engram hook prompt|stop|pre-compact|session-end`` read the hook's JSON on stdin.

    prompt       UserPromptSubmit: recall for the prompt within the budget (default 300 ms) ->
                 {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": ...}};
                 nothing printed when nothing is recalled or EngramDB is away (fail-open)
    stop         Stop: the turn that just ended -> one episode (the person's prompt and the final
                 answer: ``last_assistant_message``, else the transcript's last text after the
                 turn's last tool use), on disk in the outbox before the hook returns, delivered
                 within the flush budget (else by the next hook); nothing for a turn the person
                 interrupted or whose tool call they refused (transcript.py reads the turns)
    pre-compact  PreCompact: the last answered turn, unless this session stored it already
    session-end  SessionEnd: a bounded flush of what is still queued

Configuration comes from the environment (docs/integrations.md has the settings snippet):
ENGRAM_URL and ENGRAM_KEY (a host key for agent ENGRAM_AGENT_ID, default ``claude-code``, and
profile ENGRAM_PROFILE_ID, default ``default``), ENGRAM_USER_ID (the person, default this
machine's user: the server hashes it), ENGRAM_HOOK_PROFILE (the outbox folder, default
``~/.engram/claude-code``) and ENGRAM_RECALL_TIMEOUT_MS. Hooks of subagents (the payload names
an ``agent_id``) neither recall nor write. A hook never blocks Claude Code: a refused key is said
on stderr with exit status 1 (shown to the person, not blocking); any other trouble is exit 0.
While EngramDB is away, a turn waits in the outbox with the person's id as given (the server,
which holds the tenant's salt, hashes it on delivery): the first turn on a fresh profile too.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.errors import AuthenticationError, AuthorizationError, EngramError
from engramdb.integrations.claude_code.transcript import Turn, read_turns
from engramdb.sdk.host import HostContext
from engramdb.sdk.session import MemorySession

log = logging.getLogger(__name__)
EVENTS = {"prompt": "UserPromptSubmit", "stop": "Stop", "pre-compact": "PreCompact", "session-end": "SessionEnd"}


@dataclass(frozen=True)
class HookSettings:
    """What the hooks need, read once from the environment."""

    url: str
    key: str | None
    agent_id: str
    profile_id: str
    user_id: str
    profile_dir: Path
    recall_timeout: float
    flush_timeout: float

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> HookSettings:
        return cls(
            url=env.get("ENGRAM_URL", "http://127.0.0.1:8377"),
            key=env.get("ENGRAM_KEY"),
            agent_id=env.get("ENGRAM_AGENT_ID", "claude-code"),
            profile_id=env.get("ENGRAM_PROFILE_ID", "default"),
            user_id=env.get("ENGRAM_USER_ID") or getpass.getuser(),
            profile_dir=Path(env.get("ENGRAM_HOOK_PROFILE", str(Path.home() / ".engram" / "claude-code"))),
            recall_timeout=float(env.get("ENGRAM_RECALL_TIMEOUT_MS", "300")) / 1000,
            flush_timeout=float(env.get("ENGRAM_FLUSH_TIMEOUT_MS", "2000")) / 1000,
        )


def _session(settings: HookSettings, payload: Mapping[str, Any], event: str) -> MemorySession:
    """The hook's session. The participant's hash, once the server gave it, is kept in the profile
    folder, so the prompt hook spends its budget on recall alone; the other hooks check the key."""
    cache = settings.profile_dir / "participants.json"
    known: dict[str, str] = json.loads(cache.read_text()) if cache.exists() else {}
    slot = sha256_hex(canonical_json([settings.url, settings.agent_id, settings.profile_id, settings.user_id]))
    host = HostContext(
        agent_id=settings.agent_id,
        profile_id=settings.profile_id,
        participant_id=settings.user_id,
        participant_scope_hash=known.get(slot),
        is_subagent=bool(payload.get("agent_id")),
    )
    session = MemorySession(
        settings.url,
        api_key=settings.key,
        host=host,
        session_id=str(payload.get("session_id", "")),
        profile_dir=settings.profile_dir,
        recall_timeout=settings.recall_timeout,
        flush_timeout=settings.flush_timeout,
        check_key=event != "prompt" or slot not in known,
        start_timeout=settings.recall_timeout,
    )
    hashed = session.host.participant_scope_hash
    if hashed and known.get(slot) != hashed:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({**known, slot: hashed}))
    return session


def run_hook(event: str, stdin: TextIO, stdout: TextIO, settings: HookSettings) -> int:
    """Handle one hook: its payload from ``stdin``, what Claude Code reads on ``stdout``; the exit status."""
    try:
        payload = json.loads(stdin.read() or "{}")
    except ValueError:
        log.warning("the %s hook got no JSON on stdin", event)
        return 0
    if not isinstance(payload, dict):
        return 0
    try:
        return _handle(event, payload, stdout, settings)
    except (AuthenticationError, AuthorizationError) as error:
        print(f"EngramDB refused the key in ENGRAM_KEY ({error.code}): {error.message}", file=sys.stderr)
        return 1
    except (EngramError, OSError) as error:  # memory trouble never stops Claude Code
        log.warning("EngramDB %s hook: %s", event, error)
        return 0


def _handle(event: str, payload: Mapping[str, Any], stdout: TextIO, settings: HookSettings) -> int:
    session = _session(settings, payload, event)
    try:
        if event == "prompt":
            context = session.before_inference(str(payload.get("prompt", "")))
            if context:
                json.dump(
                    {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}}, stdout
                )
        elif event in ("stop", "pre-compact") and payload.get("transcript_path"):
            store_turn(session, event, payload, read_turns(str(payload["transcript_path"])))
        return 0
    finally:  # the prompt hook leaves earlier writes to the next hook: its budget is recall's
        session.close(0 if event == "prompt" else settings.flush_timeout)


def turn_to_store(event: str, payload: Mapping[str, Any], turns: Sequence[Turn]) -> tuple[Turn, str] | None:
    """The turn a hook stores and its final answer, or None.

    Stop: the transcript's last turn, answered with the payload's ``last_assistant_message``
    (Claude Code's own final answer; the transcript's line may still be being written), else with
    the transcript's; nothing if the person interrupted it, refused a tool call, an API error
    ended it, or it was a local command. PreCompact: the last answered turn (a compaction may
    come in the middle of a turn, whose answer is not there yet).
    """
    if event == "stop":
        turn = turns[-1] if turns else None
        given = payload.get("last_assistant_message")
        answer = given if isinstance(given, str) and given.strip() else turn.answer if turn else ""
        if turn is None or turn.ended not in ("answered", "open") or not answer.strip():
            return None
        return turn, answer
    done = [t for t in turns if t.completed]
    return (done[-1], done[-1].answer) if done else None


def store_turn(session: MemorySession, event: str, payload: Mapping[str, Any], turns: Sequence[Turn]) -> None:
    """Queue the turn the hook stores as one episode, unless this session stored it already.

    The turn's place in the transcript is its turnIndex and its prompt's uuid its sourceEventId,
    so a retry names the same episode; a turn at or before the last one stored is not stored again
    (a second Stop after another hook made Claude go on, a PreCompact after the turn's Stop).
    """
    chosen = turn_to_store(event, payload, turns)
    if chosen is None:
        log.debug("the %s hook found no completed turn to store", event)
        return
    turn, answer = chosen
    if turn.ordinal < session.turn_index:
        log.debug("turn %d of session %s is stored already", turn.ordinal, session.session_id)
        return
    session.after_turn(turn.prompt, answer, turn_id=turn.uuid, turn_index=turn.ordinal)
