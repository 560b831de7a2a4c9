"""The one corpus every system of ``engram bench versus`` gets: LoCoMo's or BEAM's turns and questions.

Each conversation is a scope (EngramDB) or a ``user_id`` (Mem0); each turn one memory.
- LoCoMo: a turn's text is ``Speaker: words`` exactly as ``engram eval`` writes it; the questions
  are categories 1-4 with at least one evidence turn (1,536 of them in ``locomo10.json``).
- BEAM: a turn is a user message and the assistant's answer after it (``reply``), as the SDK
  captures a completed turn (cleaned by its capture rules; a pair they refuse is left out); its id
  the user message's. The questions are every ability's but abstention's, with their evidence;
  a knowledge update or contradiction also names its ``older`` and ``newer`` statements.

The corpus is plain JSON, so a system running in another interpreter (Mem0, in its own virtual
environment) reads the same bytes, and every system reports back the digest of what it read.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from engramdb.sdk.capture import Refused, clean_pair
from engramdb_bench.beam import load_beam
from engramdb_bench.datasets import LOCOMO_SCORED, Conversation, load_locomo
from engramdb_bench.documents import documents

DATASETS = ("locomo", "beam")


class CorpusTurn(TypedDict):
    """One memory to write: the turn's id (LoCoMo's, BEAM's user message's), session, session date and text."""

    turn: str
    session: str
    observedAt: str
    text: str
    reply: NotRequired[str]  # BEAM: the assistant's answer, stored with the user's text as one turn


class CorpusQuestion(TypedDict):
    """One question to ask of its conversation, with its gold evidence turns."""

    id: str
    text: str
    category: str
    evidence: list[str]
    older: NotRequired[list[str]]  # BEAM: the statement a newer one replaced or contradicts
    newer: NotRequired[list[str]]


class CorpusConversation(TypedDict):
    id: str
    turns: list[CorpusTurn]
    questions: list[CorpusQuestion]


def build(
    data: Path,
    *,
    dataset: str = "locomo",
    tier: str = "100K",
    conversations: int | None = None,
    questions: int | None = None,
) -> list[CorpusConversation]:
    """Return the corpus of ``data`` (a LoCoMo file, or BEAM's folder and ``tier``): the first
    ``conversations``' turns and scored questions (at most ``questions`` per conversation)."""
    if dataset == "locomo":
        return [_locomo(conv, questions) for conv in itertools.islice(load_locomo(data).conversations, conversations)]
    if dataset == "beam":
        return [_beam(conv, questions) for conv in itertools.islice(load_beam(data, tier).conversations, conversations)]
    raise ValueError(f"dataset must be one of {', '.join(DATASETS)}")


def _locomo(conv: Conversation, questions: int | None) -> CorpusConversation:
    asked = [q for q in conv.questions if q.skip_reason is None and q.category in LOCOMO_SCORED]
    turns: list[CorpusTurn] = [
        {"turn": doc.turn_ids[0], "session": doc.session_id, "observedAt": doc.observed_at, "text": doc.text}
        for doc in documents(conv, "turn")
    ]
    return {
        "id": conv.conversation_id,
        "turns": turns,
        "questions": [
            {"id": q.question_id, "text": q.text, "category": q.category, "evidence": sorted(q.evidence_turns)}
            for q in asked[:questions]
        ],
    }


def _beam(conv: Conversation, questions: int | None) -> CorpusConversation:
    turns: list[CorpusTurn] = []
    for doc in documents(conv, "pair"):
        captured = clean_pair(doc.text, doc.reply)
        if isinstance(captured, Refused):
            continue
        turns.append(
            {
                "turn": doc.turn_ids[0],
                "session": doc.session_id,
                "observedAt": doc.observed_at,
                "text": captured.user,
                "reply": captured.assistant,
            }
        )
    asked: list[CorpusQuestion] = []
    for q in (q for q in conv.questions if q.skip_reason is None):
        question: CorpusQuestion = {
            "id": q.question_id,
            "text": q.text,
            "category": q.category,
            "evidence": sorted(q.evidence_turns),
        }
        if q.older and q.newer:
            question["older"], question["newer"] = sorted(q.older), sorted(q.newer)
        asked.append(question)
    return {"id": conv.conversation_id, "turns": turns, "questions": asked[:questions]}


def stored_text(turn: CorpusTurn) -> str:
    """The turn's text as one memory (the user's words, then the answer): what a bare pipeline embeds."""
    reply = turn.get("reply")
    return f"{turn['text']}\n{reply}" if reply else turn["text"]


def digest(corpus: list[CorpusConversation]) -> str:
    """Return the SHA-256 of the corpus as canonical JSON: equal digests, equal inputs."""
    return hashlib.sha256(json.dumps(corpus, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def seen(corpus: list[CorpusConversation]) -> dict[str, Any]:
    """Return what a system saw, to compare across systems: turn ids per conversation, and each
    question's conversation and evidence."""
    return {
        "turns": {c["id"]: sorted(t["turn"] for t in c["turns"]) for c in corpus},
        "questions": {q["id"]: [c["id"], q["evidence"]] for c in corpus for q in c["questions"]},
    }


def counts(corpus: list[CorpusConversation]) -> dict[str, int]:
    """Return the corpus's size: conversations, turns and questions."""
    return {
        "conversations": len(corpus),
        "turns": sum(len(c["turns"]) for c in corpus),
        "questions": sum(len(c["questions"]) for c in corpus),
    }
