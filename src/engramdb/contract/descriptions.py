"""What each wire field of the contract means: the OpenAPI document and the MCP and CLI help read these."""

from __future__ import annotations

# What each wire field means, once for the whole vocabulary: the OpenAPI document and the
# MCP and CLI help read these.
FIELD_DESCRIPTIONS: dict[str, str] = {
    "schemaVersion": "contract version; always 1",
    "eventType": "'episode' or 'fact'",
    "eventId": "the episode's id: SHA-256 over its canonical content, as RushDB computes it "
    "(computed by the server when omitted; a given one must match)",
    "factId": "the fact's id: SHA-256 over its canonical content, as RushDB computes it "
    "(computed by the server when omitted; a given one must match)",
    "runtime": "the agent runtime that wrote it: openclaw, hermes or custom",
    "agentId": "scope: which agent the memory belongs to",
    "profileId": "scope: which profile (configuration) of that agent",
    "privacyScope": "scope: private (one participant) or shared (a shared space)",
    "participantScopeHash": "scope: salted SHA-256 of the participant's identity (64 lower-hex), never the raw id",
    "sandboxEligible": "scope: whether sandboxed runs may use the memory",
    "userId": "the participant's own id, instead of participantScopeHash: the server hashes it with the "
    "tenant's secret salt and keeps nothing of it (at most 512 characters; bodies only)",
    "externalSessionId": "the host's conversation or session id",
    "sourceEventId": "the event this one came from (for a fact, the turn or document it was learned from)",
    "turnIndex": "position of the turn in its session, from 0",
    "userText": "what the user said in the turn (at most 16,000 characters)",
    "assistantText": "what the assistant answered (at most 16,000 characters)",
    "summary": "a one-line summary of the turn: what recall shows first (at most 4,000 characters)",
    "conversationKind": "direct, local or shared conversation",
    "channelIdHash": "salted SHA-256 of the channel id, for shared conversations",
    "visibility": "who may see the memory: participant, profile or shared",
    "trustClass": "how far the host trusts the content: trusted, mixed or untrusted",
    "originClass": "where the content came from, in the host's words (e.g. conversation)",
    "observedAt": "when the turn happened (RFC 3339 date-time)",
    "provenance": "free text naming the writer (at most 512 characters)",
    "text": "the claim, as one self-contained sentence (at most 4,000 characters)",
    "kind": "the kind of claim, e.g. preference, name, database, likes (at most 64 characters)",
    "subjectKey": "what the claim is about, e.g. user or project:billing (at most 256 characters)",
    "confidence": "how sure the writer is, 0 to 1",
    "active": "false stores the fact as history (archived), never current",
    "supersedesFactId": "the fact this one replaces",
    "validFrom": "valid time: when the claim starts being true in the world (RFC 3339)",
    "validUntil": "valid time: when it stops being true, if known (after validFrom)",
}
