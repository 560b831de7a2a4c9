"""A turn read from another product's export, and the episode write it becomes.

Each turn becomes one episode in the import's scope, at its original time (``observedAt``). The
same capture rules as live turns apply (``engramdb.sdk.capture``): secrets, command output and
local paths are redacted, text is normalised and bounded, and a side with nothing meaningful left
is dropped. Its id is the contract's eventId over the session, the turn's index, the source's own
id for the turn and the two texts, so importing the same file again names the same episodes and
writes nothing; a Claude Code turn gets the id its live hooks gave it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engramdb import clock
from engramdb.sdk.capture import TURN_CHARS, Refused, clean_text

RUNTIME = "custom"  # what the Claude Code hooks write as, so their turns and imported ones are one episode


@dataclass(frozen=True)
class ImportedTurn:
    """One turn: what the person said and what the assistant answered (either may be empty)."""

    session: str
    index: int  # its place in the session, as the source orders it
    user: str
    assistant: str
    at: str | None = None  # when it was said, as the source wrote it (RFC 3339)
    source_id: str | None = None  # the source's id for it, kept as sourceEventId


@dataclass
class Reading:
    """What a reader found in a file: turns, and what it passed over (reason -> count)."""

    turns: list[ImportedTurn] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def unix_time(seconds: Any) -> str | None:
    """An RFC 3339 time from unix seconds (None for anything else, a time no calendar holds included:
    NaN, 1e20, -1e12)."""
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
        try:
            return clock.to_text(datetime.fromtimestamp(float(seconds), UTC))
        except (ValueError, OverflowError, OSError):
            return None
    return None


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else p.get("text") for p in content if isinstance(p, (str, dict))]
        return "\n".join(p for p in parts if isinstance(p, str) and p.strip())
    return ""


def episode_body(turn: ImportedTurn, provenance: str) -> tuple[dict[str, Any], tuple[str, ...]] | Refused:
    """The episode write for a turn and the kinds of what was redacted, or why it is not written."""
    sides: list[str] = []
    redacted: list[str] = []
    for text in (turn.user, turn.assistant):
        cleaned = clean_text(text, TURN_CHARS) if text.strip() else Refused("the text is empty")
        sides.append("" if isinstance(cleaned, Refused) else cleaned[0])
        redacted += [] if isinstance(cleaned, Refused) else list(cleaned[1])
    if not any(sides):
        return Refused("nothing meaningful is left after the capture rules")
    body: dict[str, Any] = {
        "runtime": RUNTIME,
        "externalSessionId": turn.session,
        "turnIndex": turn.index,
        "userText": sides[0],
        "assistantText": sides[1],
        "conversationKind": "direct",
        "trustClass": "mixed",
        "originClass": "conversation",
        "provenance": provenance,
    }
    at = _time(turn.at)
    if at is not None:
        body["observedAt"] = at
    if turn.source_id:
        body["sourceEventId"] = turn.source_id
    return body, tuple(dict.fromkeys(redacted))


def _time(text: str | None) -> str | None:
    if not text:
        return None
    try:
        return clock.normalize(text)
    except ValueError:
        return None  # a time the source wrote oddly: the episode is observed when it is imported
