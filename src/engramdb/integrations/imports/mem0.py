"""A Mem0 export: what ``Memory.get_all`` (or the platform's ``client.get_all``) returns, saved as
JSON: ``{"results": [...]}`` (Mem0 1.1 and later; a bare list before). Each memory is ``id``,
``memory`` (the text), ``hash``, ``created_at``, ``updated_at``, and, when set, ``user_id``,
``agent_id``, ``run_id``, ``actor_id``, ``role`` and ``metadata``.

A memory becomes one episode: said by the user (the assistant when its ``role`` says so), at its
``created_at``, in the session of its ``run_id`` (else its user's), its Mem0 id kept as the
episode's source id. Its turn index is 0: a memory's id, not its place in a listing that can lose
memories, names it, so an export taken again after a delete names the same episodes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engramdb.integrations.imports.turns import ImportedTurn, Reading


def read(path: Path) -> Reading:
    data = json.loads(path.read_text(encoding="utf-8-sig"))  # a byte-order mark (Windows) is no JSON
    memories = data.get("results", data.get("memories")) if isinstance(data, Mapping) else data
    reading = Reading()
    for memory in memories if isinstance(memories, list) else []:
        turn = _turn(memory)
        if turn is None:
            reading.skipped["an entry with no memory text"] += 1
        else:
            reading.turns.append(turn)
    return reading


def _turn(memory: Any) -> ImportedTurn | None:
    if not isinstance(memory, Mapping) or not isinstance(memory.get("memory"), str):
        return None
    text = memory["memory"]
    owner = memory.get("run_id") or memory.get("user_id") or memory.get("agent_id") or "all"
    by_assistant = memory.get("role") == "assistant"
    return ImportedTurn(
        session=f"mem0:{owner}",
        index=0,
        user="" if by_assistant else text,
        assistant=text if by_assistant else "",
        at=memory.get("created_at") if isinstance(memory.get("created_at"), str) else None,
        source_id=str(memory["id"]) if memory.get("id") else None,
    )
