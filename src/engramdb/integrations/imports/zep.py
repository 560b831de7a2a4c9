"""Zep and Graphiti episodes, saved as JSON.

Zep answers ``graph.episode.get_by_user_id`` (and a thread's episodes) with ``{"episodes": [...]}``:
each ``uuid``, ``content``, ``created_at``, ``source`` (``message``, ``text`` or ``json``),
``source_description``, and for a chat message its ``role`` (the speaker's name), ``role_type``
(``user``, ``assistant``, ``system``, ``tool``, ...) and ``session_id`` (``thread_id`` in later
versions). Graphiti's own episodic nodes carry ``uuid``, ``name``, ``group_id``, ``source``,
``content``, ``valid_at`` (when it happened) and ``created_at``; a ``message`` episode's content is
lines of ``speaker: text`` (a speaker whose name has a word such as assistant, bot, agent or support
speaks for the assistant; anyone else is the user).

Messages are read per session in time order; a user message and the assistant's answers after it
are one turn (an answer with no user message before it is a turn of its own; a user message with
no answer yet is left for a later import). A ``text`` episode is one episode of its own text;
``json`` episodes are data, not turns, and system and tool messages are never read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engramdb.integrations.imports.pairing import Pairing
from engramdb.integrations.imports.turns import ImportedTurn, Reading

# A speaker whose name has one of these words speaks for the assistant (Graphiti names speakers freely).
_ASSISTANT = {"assistant", "ai", "bot", "agent", "model", "support", "gpt", "claude"}
_SPEAKER = re.compile(r"^([^:\n]{1,60}):\s?(.*)$")


def read(path: Path) -> Reading:
    data = json.loads(path.read_text(encoding="utf-8-sig"))  # a byte-order mark (Windows) is no JSON
    episodes = data.get("episodes", data.get("items")) if isinstance(data, Mapping) else data
    reading = Reading()
    sessions: dict[str, list[tuple[str, str, Mapping[str, Any]]]] = {}
    found = [e for e in episodes or [] if isinstance(e, Mapping)]
    for episode in sorted(found, key=lambda e: str(e.get("valid_at") or e.get("created_at") or "")):
        _messages(episode, sessions, reading)
    for session, messages in sessions.items():
        _pair(session, messages, reading)
    return reading


def _messages(episode: Mapping[str, Any], sessions: dict[str, list[Any]], reading: Reading) -> None:
    """Add an episode's messages, (speaker kind, text, episode), to its session."""
    session = str(episode.get("thread_id") or episode.get("session_id") or episode.get("group_id") or "default")
    content = str(episode.get("content") or "")
    kind = episode.get("role_type")
    if episode.get("source") == "json":
        reading.skipped["a json episode (data, not a turn)"] += 1
    elif kind in ("user", "assistant"):
        sessions.setdefault(session, []).append((kind, content, episode))
    elif kind is not None and kind != "norole":
        reading.skipped[f"a {kind} message"] += 1
    elif episode.get("source") == "message":
        for speaker, text in _speakers(content):
            sessions.setdefault(session, []).append((speaker, text, episode))
    else:
        sessions.setdefault(session, []).append(("text", content, episode))


def _speakers(content: str) -> list[tuple[str, str]]:
    """``speaker: text`` lines as (user or assistant, text); a line without a speaker continues one."""
    found: list[tuple[str, str]] = []
    for line in content.split("\n"):  # not splitlines(): U+2028 and its kind stay inside a line
        match = _SPEAKER.match(line.rstrip("\r"))
        if match:
            kind = "assistant" if set(match.group(1).lower().split()) & _ASSISTANT else "user"
            found.append((kind, match.group(2)))
        elif found:
            found[-1] = (found[-1][0], f"{found[-1][1]}\n{line}")
    return found


def _pair(session: str, messages: list[tuple[str, str, Mapping[str, Any]]], reading: Reading) -> None:
    turns = Pairing(reading, lambda index, user, answer, first: _turn(session, index, user, answer, first))
    for kind, text, episode in messages:
        turns.add(kind, text, episode)
    turns.end()


def _turn(session: str, index: int, user: str, assistant: str, episode: Mapping[str, Any]) -> ImportedTurn:
    at = episode.get("valid_at") or episode.get("created_at")
    return ImportedTurn(
        f"zep:{session}", index, user, assistant, at if isinstance(at, str) else None, episode.get("uuid")
    )
