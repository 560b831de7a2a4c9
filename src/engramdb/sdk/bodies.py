"""The write bodies a session builds from what the host said (its context) and what was captured."""

from __future__ import annotations

from engramdb import clock
from engramdb.sdk.capture import Captured
from engramdb.sdk.host import HostContext


def visibility(host: HostContext) -> str:
    """Who may see what this host writes: the participant, or the shared space."""
    return "participant" if host.privacy_scope == "private" else "shared"


def episode_body(
    host: HostContext, session_id: str, captured: Captured, turn: int, turn_id: str | None, provenance: str
) -> dict[str, object]:
    """The episode write for one captured turn (``mixed`` trust: the user's words and the model's)."""
    body: dict[str, object] = {
        "runtime": host.runtime,
        "externalSessionId": session_id,
        "turnIndex": turn,
        "userText": captured.user,
        "assistantText": captured.assistant,
        "summary": captured.summary,
        "conversationKind": host.conversation_kind,
        "visibility": visibility(host),
        "trustClass": "mixed",
        "originClass": "conversation",
        "observedAt": clock.now_text(),
        "provenance": provenance,
    }
    if turn_id is not None:
        body["sourceEventId"] = turn_id
    if host.channel_id_hash is not None:
        body["channelIdHash"] = host.channel_id_hash
    return body


def fact_body(
    host: HostContext,
    subject: str,
    kind: str,
    text: str,
    *,
    confidence: float,
    source_event_id: str,
    valid_from: str | None = None,
    valid_until: str | None = None,
    supersedes_fact_id: str | None = None,
) -> dict[str, object]:
    """The fact write for a statement the host makes (``trusted``: it comes through the host's own path)."""
    body: dict[str, object] = {
        "runtime": host.runtime,
        "text": text,
        "kind": kind,
        "subjectKey": subject,
        "confidence": confidence,
        "active": True,
        "validFrom": valid_from or clock.now_text(),
        "sourceEventId": source_event_id,
        "visibility": visibility(host),
        "trustClass": "trusted",
        "provenance": "engramdb-sdk:remember",
    }
    body.update({k: v for k, v in (("validUntil", valid_until), ("supersedesFactId", supersedes_fact_id)) if v})
    return body
