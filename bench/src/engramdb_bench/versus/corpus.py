"""The one corpus every system of ``engram bench versus`` gets: LoCoMo turns and questions.

Each LoCoMo conversation is a scope (EngramDB) or a ``user_id`` (Mem0); each turn one memory,
its text ``Speaker: words`` exactly as ``engram eval`` writes it; the questions are categories 1-4
with at least one evidence turn (1,536 of them in ``locomo10.json``). The corpus is plain JSON, so
a system running in another interpreter (Mem0, in its own virtual environment) reads the same
bytes, and every system reports back the digest of what it read.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any, TypedDict

from engramdb_bench.datasets import LOCOMO_SCORED, load_locomo
from engramdb_bench.documents import documents


class CorpusTurn(TypedDict):
    """One memory to write: the turn's LoCoMo id, session, session date and text."""

    turn: str
    session: str
    observedAt: str
    text: str


class CorpusQuestion(TypedDict):
    """One question to ask of its conversation, with its gold evidence turns."""

    id: str
    text: str
    category: str
    evidence: list[str]


class CorpusConversation(TypedDict):
    id: str
    turns: list[CorpusTurn]
    questions: list[CorpusQuestion]


def build(data: Path, *, conversations: int | None = None, questions: int | None = None) -> list[CorpusConversation]:
    """Return the LoCoMo corpus of ``data``: turn documents and the scored questions (at most
    ``questions`` per conversation, of the first ``conversations``)."""
    corpus: list[CorpusConversation] = []
    for conv in itertools.islice(load_locomo(data).conversations, conversations):
        asked = [q for q in conv.questions if q.skip_reason is None and q.category in LOCOMO_SCORED]
        turns: list[CorpusTurn] = [
            {"turn": doc.turn_ids[0], "session": doc.session_id, "observedAt": doc.observed_at, "text": doc.text}
            for doc in documents(conv, "turn")
        ]
        corpus.append(
            {
                "id": conv.conversation_id,
                "turns": turns,
                "questions": [
                    {"id": q.question_id, "text": q.text, "category": q.category, "evidence": sorted(q.evidence_turns)}
                    for q in asked[:questions]
                ],
            }
        )
    return corpus


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
