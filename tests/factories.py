"""Builders for contract events and scopes used across the tests."""

from __future__ import annotations

from typing import Any

from engramdb.contract.canonical import hash_scope


def participant(name: str) -> str:
    return hash_scope(["test", name])


def scope_fields(**overrides: Any) -> dict[str, Any]:
    """A full five-field scope (camelCase), with overrides."""
    fields: dict[str, Any] = {
        "agentId": "coder",
        "profileId": "default",
        "privacyScope": "private",
        "participantScopeHash": participant("alice"),
        "sandboxEligible": False,
    }
    fields.update(overrides)
    return fields


def episode_body(
    user: str = "I prefer TypeScript for this service.",
    assistant: str = "I will use TypeScript.",
    *,
    summary: str | None = None,
    session: str = "session-1",
    turn: int = 0,
    scope: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An episode write body; ``scope`` fields are included when given."""
    body: dict[str, Any] = {
        "runtime": "custom",
        "externalSessionId": session,
        "turnIndex": turn,
        "userText": user,
        "assistantText": assistant,
        "summary": user if summary is None else summary,
        "conversationKind": "direct",
        "visibility": "participant",
        "trustClass": "trusted",
        "originClass": "conversation",
        "observedAt": "2026-08-18T00:00:00Z",
        "provenance": "test",
    }
    body.update(scope or {})
    body.update(extra)
    return body


def fact_body(
    text: str = "The user prefers TypeScript.",
    *,
    subject: str = "user",
    kind: str = "preference",
    scope: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A fact write body; ``scope`` fields are included when given."""
    body: dict[str, Any] = {
        "runtime": "custom",
        "text": text,
        "kind": kind,
        "subjectKey": subject,
        "confidence": 0.9,
        "sourceEventId": "turn-1",
        "validFrom": "2026-08-18T00:00:00Z",
        "visibility": "participant",
        "trustClass": "trusted",
        "provenance": "test",
    }
    body.update(scope or {})
    body.update(extra)
    return body
