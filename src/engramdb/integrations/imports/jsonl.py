"""Plain chat turns, one JSON object a line, in one of two shapes (mixed freely):

- a message, as chat APIs write them: ``{"role": "user"|"assistant"|..., "content": "..."}``
  (content may be a list of text parts); a user message and the assistant's answers after it are
  one turn; ``system``, ``developer`` and ``tool`` messages are never read;
- a turn: ``{"user": "...", "assistant": "..."}``.

Either may carry ``session`` (or ``session_id``, ``conversation_id``, ``thread_id``; default: the
file's name), ``timestamp`` (or ``time``, ``created_at``: RFC 3339 or unix seconds) and ``id``.
Turns are numbered per session in file order.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engramdb.integrations.imports.pairing import MakeTurn, Pairing
from engramdb.integrations.imports.turns import ImportedTurn, Reading, text_of, unix_time

_SESSION = ("session", "session_id", "sessionId", "conversation_id", "thread_id")
_TIME = ("timestamp", "time", "created_at", "createdAt")


def read(path: Path) -> Reading:
    reading = Reading()
    sessions: dict[str, Pairing] = {}
    # Lines end at newlines only: str.splitlines() also breaks at U+2028, U+2029 and U+0085, which JSON
    # strings may hold unescaped (JavaScript's JSON.stringify leaves them so).
    for raw in path.read_bytes().removeprefix(codecs.BOM_UTF8).split(b"\n"):  # a Windows byte-order mark
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            reading.skipped["a line that is not UTF-8"] += 1
            continue
        try:
            item = json.loads(line)
        except ValueError:
            reading.skipped["a line that is not JSON"] += 1
            continue
        if not isinstance(item, Mapping):
            reading.skipped["a line that is not a JSON object"] += 1
            continue
        session = next((str(item[k]) for k in _SESSION if item.get(k)), path.stem)
        if session not in sessions:
            sessions[session] = Pairing(reading, _maker(session))
        _add(sessions[session], item, reading)
    for pairing in sessions.values():
        pairing.end()
    return reading


def _add(pairing: Pairing, item: Mapping[str, Any], reading: Reading) -> None:
    if "role" in item:
        role = item.get("role")
        if role in ("user", "assistant"):
            pairing.add(str(role), text_of(item.get("content")), item)
        else:
            reading.skipped[f"a {role} message"] += 1
    elif "user" in item or "assistant" in item:
        pairing.flush()
        pairing.add("user", text_of(item.get("user")), item)
        pairing.add("assistant", text_of(item.get("assistant")), item)
        pairing.flush()
    else:
        reading.skipped["a line with neither role nor user/assistant"] += 1


def _maker(session: str) -> MakeTurn:
    def make(index: int, user: str, answer: str, first: Mapping[str, Any]) -> ImportedTurn:
        stamp = next((first[k] for k in _TIME if first.get(k) is not None), None)
        at = stamp if isinstance(stamp, str) else unix_time(stamp)
        source = first.get("id")
        return ImportedTurn(session, index, user, answer, at, str(source) if source is not None else None)

    return make
