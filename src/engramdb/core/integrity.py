"""Does a stored memory still say what was written? Part of ``engram audit verify``.

Its audit digest (core/coverage.py) covers everything about a memory; these checks need no audit
entry at all, so they name the edit more plainly:

- its id is the contract's hash of its stored event (an edit of the event's text changes it);
- its searchable, served ``text`` is what its stored event makes (an edit of the column alone).
"""

from __future__ import annotations

import json
from typing import Any

from engramdb.contract.canonical import event_id, fact_id
from engramdb.core.rows import episode_text
from engramdb.storage.port import MemoryRecord


def event_problem(row: MemoryRecord) -> str | None:
    """What is wrong with a memory's event or text, or None."""
    try:
        event: dict[str, Any] = json.loads(row.event_json)
        computed, text = _id_and_text(row.source, event)
    except (ValueError, KeyError, TypeError):  # not an event the server stores
        return "its stored event is not a contract event (the event was edited)"
    if computed != row.memory_id:
        return "its stored event does not hash to its id (the event was edited)"
    if row.text != text:
        return "its stored text is not what its event says (the text was edited)"
    return None


def _id_and_text(source: str, event: dict[str, Any]) -> tuple[str, str]:
    if source == "EPISODE":
        computed = event_id(
            runtime=event["runtime"],
            agent_id=event["agentId"],
            profile_id=event["profileId"],
            external_session_id=event["externalSessionId"],
            turn_index=event["turnIndex"],
            user_text=event["userText"],
            assistant_text=event["assistantText"],
            source_event_id=event.get("sourceEventId"),
        )
        return computed, episode_text(event["summary"], event["userText"], event["assistantText"])
    computed = fact_id(
        runtime=event["runtime"],
        agent_id=event["agentId"],
        profile_id=event["profileId"],
        participant_scope_hash=event["participantScopeHash"],
        subject_key=event["subjectKey"],
        kind=event["kind"],
        source_event_id=event["sourceEventId"],
        text=event["text"],
    )
    return computed, event["text"]
