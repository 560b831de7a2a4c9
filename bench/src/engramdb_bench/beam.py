"""BEAM (ICLR 2026) as an evaluation dataset: a tier's conversations and their probing questions.

Each conversation (``<tier>/<n>/chat.json``) is a list of batches; a batch is a dated session of
turns, a turn a list of messages (a user message, the assistant's answer, sometimes follow-ups).
Each user message with the assistant's answer after it becomes one episode, written as the SDK
writes a completed turn (``documents.sdk_episodes``), dated at its batch's time anchor (the batch's
``time_anchor``, else the first message's that carries one). An episode's id in the evaluation is
its user message's id.

Every probing question except abstention names the messages that answer it (``source_chat_ids``:
a list, or an object of lists, sometimes nested). Each id maps to its episode (an assistant
message to the user message before it); the question's evidence is those episodes. For
``knowledge_update`` and ``contradiction_resolution`` the two named groups are kept apart as the
older and the newer statement (by message order: the group with the later last message is the
newer), so a run can check whether the newer ranks above the older; a question whose two groups
share an episode has no such order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from engramdb_bench.datasets import Conversation, Dataset, Question, Session, Turn

ABILITIES = (
    "abstention",
    "contradiction_resolution",
    "event_ordering",
    "information_extraction",
    "instruction_following",
    "knowledge_update",
    "multi_session_reasoning",
    "preference_following",
    "summarization",
    "temporal_reasoning",
)
SCORED = tuple(a for a in ABILITIES if a != "abstention")
ORDERED = ("knowledge_update", "contradiction_resolution")  # abilities with an older and a newer statement
TIERS = ("100K", "500K", "1M", "10M")


def anchor_date(text: str) -> str:
    """Return a BEAM time anchor (``March-15-2024``) as ISO 8601 UTC midnight."""
    return datetime.strptime(text.strip(), "%B-%d-%Y").strftime("%Y-%m-%dT00:00:00Z")


def conversation_dirs(root: Path, tier: str, names: list[str] | None = None) -> list[Path]:
    """Return the tier's conversation folders (numerically sorted), or the ones ``names`` lists."""
    base = Path(root) / tier
    if not base.is_dir():
        raise ValueError(f"no BEAM tier folder {base}")
    found = {p.name: p for p in base.iterdir() if (p / "chat.json").is_file()}
    if names is not None:
        missing = [n for n in names if n not in found]
        if missing:
            raise ValueError(f"no conversation {', '.join(missing)} under {base}")
        return [found[n] for n in names]
    return sorted(found.values(), key=lambda p: (not p.name.isdigit(), int(p.name) if p.name.isdigit() else 0, p.name))


def load_beam(root: Path, tier: str = "100K", conversations: list[str] | None = None) -> Dataset:
    """Return BEAM's ``tier`` under ``root`` (every conversation folder, or those named), read lazily."""
    dirs = conversation_dirs(root, tier, conversations)
    return Dataset(
        name="beam",
        source=str(Path(root) / tier),
        headline=SCORED,
        apart=(),
        conversations=_iter(dirs, tier),
        size=len(dirs),
        writes="sdk",
    )


def _iter(dirs: list[Path], tier: str) -> Iterator[Conversation]:
    for folder in dirs:
        chat = json.loads((folder / "chat.json").read_text(encoding="utf-8"))
        probes = json.loads((folder / "probing_questions.json").read_text(encoding="utf-8"))
        yield beam_conversation(f"{tier}-{folder.name}", chat, probes)


def beam_conversation(conversation_id: str, chat: list[dict[str, Any]], probes: dict[str, Any]) -> Conversation:
    """Return one BEAM conversation: a session per batch, its questions with evidence episodes."""
    sessions: list[Session] = []
    owner: dict[int, str] = {}  # message id -> the id of its episode (the user message's)
    for batch in chat:
        messages = [m for turn in batch["turns"] for m in turn]
        anchor = batch.get("time_anchor") or next((m["time_anchor"] for m in messages if m.get("time_anchor")), None)
        if anchor is None:
            raise ValueError(f"{conversation_id}: batch {batch['batch_number']} has no time anchor")
        turns = []
        current: str | None = None
        for m in messages:
            if m["role"] == "user":
                current = str(m["id"])
            if current is not None:
                owner[int(m["id"])] = current
            turns.append(Turn(str(m["id"]), m["role"], str(m["content"]), indexed=m["role"] == "user"))
        sessions.append(Session(f"B{batch['batch_number']}", anchor_date(anchor), tuple(turns)))
    session_of = {t.turn_id: s.session_id for s in sessions for t in s.turns}
    questions = [
        _question(conversation_id, ability, i, probe, owner, session_of)
        for ability in ABILITIES
        for i, probe in enumerate(probes.get(ability, []))
    ]
    return Conversation(conversation_id, tuple(sessions), tuple(questions))


def message_ids(value: Any) -> list[int]:
    """Return every message id in a ``source_chat_ids`` value (list, object of lists, nested), in order."""
    if isinstance(value, dict):
        return [i for v in value.values() for i in message_ids(v)]
    if isinstance(value, list):
        return [i for v in value for i in message_ids(v)]
    return [int(value)] if value is not None else []


def _question(
    conversation_id: str,
    ability: str,
    index: int,
    probe: dict[str, Any],
    owner: dict[int, str],
    session_of: dict[str, str],
) -> Question:
    source = probe.get("source_chat_ids")
    evidence = frozenset(owner[i] for i in message_ids(source) if i in owner)
    older: frozenset[str] = frozenset()
    newer: frozenset[str] = frozenset()
    if ability in ORDERED and isinstance(source, dict) and len(source) == 2:
        groups = sorted(
            (frozenset(owner[i] for i in message_ids(v) if i in owner) for v in source.values()),
            key=lambda g: max((int(e) for e in g), default=-1),
        )
        if all(groups) and not groups[0] & groups[1]:
            older, newer = groups[0], groups[1]
    skip = None
    if ability == "abstention":
        skip = "abstention"
    elif not evidence:
        skip = "no evidence message"
    return Question(
        question_id=f"{conversation_id}#{ability}#{index}",
        text=str(probe["question"]),
        category=ability,
        evidence_turns=evidence,
        evidence_sessions=frozenset(session_of[e] for e in evidence),
        skip_reason=skip,
        answer=str(probe.get("answer") or probe.get("ideal_answer") or probe.get("ideal_response") or ""),
        older=older,
        newer=newer,
    )
