"""Documents of a conversation at a granularity, and the episodes that carry them.

Granularities (only ``indexed`` turns are ever document text):

* ``turn``: one document per indexed turn.
* ``pair``: an indexed turn with the turn after it: the assistant reply (LongMemEval, written
  as the episode's ``assistantText``) or the other speaker's turn (LoCoMo, both as text).
* ``session``: the session's indexed turns, in order, packed into as few documents of at most
  :data:`DOC_CAP` characters as fit (a session longer than that becomes several documents).

An episode's ``summary`` holds at most 4,000 characters (the server refuses longer, it never
truncates), so a document whose text is longer is written as several episodes split at
whitespace; each episode maps back to its document, and a document ranks where its best
episode ranks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engramdb.contract.bounds import TEXT_CAPS
from engramdb.contract.writes import EpisodeWrite
from engramdb.sdk.bodies import episode_body
from engramdb.sdk.capture import Refused, clean_pair
from engramdb.sdk.host import HostContext
from engramdb_bench.datasets import Conversation, Session, Turn

GRANULARITIES = ("turn", "pair", "session")
DOC_CAP = TEXT_CAPS["summary"]


@dataclass(frozen=True)
class Document:
    """A unit of retrieval: the turns it covers, in one session, and its text."""

    doc_id: str
    session_id: str
    turn_ids: tuple[str, ...]
    text: str
    reply: str  # an assistant reply written as assistantText ("" if none)
    observed_at: str


def documents(conversation: Conversation, granularity: str) -> list[Document]:
    """Return the documents of ``conversation`` at ``granularity`` (turn, pair or session)."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"granularity must be one of {', '.join(GRANULARITIES)}")
    build = {"turn": _turn_docs, "pair": _pair_docs, "session": _session_docs}[granularity]
    return [doc for session in conversation.sessions for doc in build(session) if doc.text.strip()]


def _doc(session: Session, turns: list[Turn], text: str, reply: str = "") -> Document:
    ids = tuple(t.turn_id for t in turns)
    return Document(
        ids[0] if len(ids) == 1 else f"{ids[0]}..{ids[-1]}", session.session_id, ids, text, reply, session.observed_at
    )


def _turn_docs(session: Session) -> Iterable[Document]:
    for turn in session.turns:
        if turn.indexed:
            yield _doc(session, [turn], turn.text)


def _pair_docs(session: Session) -> Iterable[Document]:
    turns = session.turns
    i = 0
    while i < len(turns):
        turn = turns[i]
        if not turn.indexed:
            i += 1
            continue
        after = turns[i + 1] if i + 1 < len(turns) else None
        if after is None:
            yield _doc(session, [turn], turn.text)
            i += 1
        elif after.indexed:  # two speakers, both indexed
            yield _doc(session, [turn, after], f"{turn.text}\n{after.text}")
            i += 2
        else:  # the reply to an indexed turn
            yield _doc(session, [turn], turn.text, reply=after.text)
            i += 2


def _session_docs(session: Session) -> Iterable[Document]:
    group: list[Turn] = []
    size = 0
    for turn in (t for t in session.turns if t.indexed):
        if group and size + 1 + len(turn.text) > DOC_CAP:
            yield _doc(session, group, "\n".join(t.text for t in group))
            group, size = [], 0
        size += len(turn.text) + (1 if group else 0)  # the joined text's length
        group.append(turn)
    if group:
        yield _doc(session, group, "\n".join(t.text for t in group))


def split_text(text: str, cap: int = DOC_CAP) -> list[str]:
    """Return ``text`` (not blank) cut into pieces of at most ``cap`` characters, at whitespace when possible."""
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > cap:
        cut = max(rest.rfind(" ", 0, cap + 1), rest.rfind("\n", 0, cap + 1))
        if cut < cap // 2:  # no whitespace in the second half: cut hard
            cut = cap
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces


def episodes(doc: Document, scope: dict[str, Any], first_index: int, provenance: str) -> list[EpisodeWrite]:
    """Return the episode bodies that carry ``doc`` (one unless its text exceeds the summary cap).

    ``summary`` and ``userText`` both hold the (piece of) text, so the stored memory is exactly
    that text; an assistant reply goes in ``assistantText`` on the last piece. Turn indexes
    count from ``first_index`` within the session.
    """
    pieces = split_text(doc.text)
    reply = doc.reply[: TEXT_CAPS["assistantText"]]
    bodies = []
    for n, piece in enumerate(pieces):
        bodies.append(
            EpisodeWrite.model_validate(
                {
                    **scope,
                    "runtime": "custom",
                    "externalSessionId": doc.session_id,
                    "turnIndex": first_index + n,
                    "userText": piece,
                    "assistantText": reply if n == len(pieces) - 1 else "",
                    "summary": piece,
                    "conversationKind": "direct",
                    "visibility": "participant",
                    "trustClass": "trusted",
                    "originClass": "conversation",
                    "observedAt": doc.observed_at,
                    "provenance": provenance,
                }
            )
        )
    return bodies


def sdk_episodes(doc: Document, scope: dict[str, Any], first_index: int, provenance: str) -> list[EpisodeWrite]:
    """Return the one episode the SDK writes for ``doc`` (a user turn and the reply after it).

    As ``MemorySession`` stores a completed turn: the pair cleaned by the capture rules (redacted,
    normalised, each side bounded), the summary the user's text on one line, ``mixed`` trust; its
    time the document's (the batch's time anchor). A pair the capture rules refuse is not written.
    """
    captured = clean_pair(doc.text, doc.reply)
    if isinstance(captured, Refused):
        return []
    body = episode_body(host_of(scope), doc.session_id, captured, first_index, doc.doc_id, provenance)
    return [EpisodeWrite.model_validate({**scope, **body, "observedAt": doc.observed_at})]


def host_of(scope: dict[str, Any]) -> HostContext:
    """The SDK's host context for the five scope fields of a write (wire names)."""
    return HostContext(
        agent_id=scope["agentId"],
        profile_id=scope["profileId"],
        participant_scope_hash=scope["participantScopeHash"],
        privacy_scope=scope["privacyScope"],
        sandbox_eligible=scope["sandboxEligible"],
    )
