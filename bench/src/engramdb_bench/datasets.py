"""Loaders for the retrieval benchmarks: LoCoMo (one JSON file) and LongMemEval (one JSON per question).

Both become the same shape: a :class:`Conversation` (one scope at evaluation time) holds dated
:class:`Session` s of :class:`Turn` s and the :class:`Question` s asked about it, each with its
gold evidence as turn ids and session ids. Questions the protocols do not score keep a
``skip_reason`` so they can be counted, never silently dropped.

LoCoMo: every turn is indexable as ``Speaker: text``; turn ids are the dataset's ``D<s>:<t>``;
categories are mapped as the official code does (1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial); evidence strings are split on ``;``, ``,`` and spaces and ids
that name no turn are dropped.

LongMemEval (its ``src/retrieval`` protocol): only user turns are indexable; a turn id is
``<session id>_<1-based position>``; gold sessions are the answer sessions holding a user turn
marked ``has_answer``, gold turns those user turns; abstention questions (``_abs``) and
questions without such a turn are skipped.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from engramdb_bench.metrics import parse_evidence

log = logging.getLogger(__name__)

LOCOMO_CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
LOCOMO_SCORED = ("multi-hop", "temporal", "open-domain", "single-hop")  # the headline set
LOCOMO_APART = ("adversarial",)  # reported, but outside the headline set


@dataclass(frozen=True)
class Turn:
    """One utterance. ``text`` is what a document holds; ``indexed`` says whether it is indexed."""

    turn_id: str
    role: str  # LoCoMo: the speaker's name; LongMemEval: "user" or "assistant"
    text: str
    indexed: bool = True


@dataclass(frozen=True)
class Session:
    """A dated session of turns; ``observed_at`` is ISO 8601 UTC (``...Z``)."""

    session_id: str
    observed_at: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    """A question with its gold evidence; ``skip_reason`` is set when the protocol does not score it."""

    question_id: str
    text: str
    category: str
    evidence_turns: frozenset[str]
    evidence_sessions: frozenset[str]
    skip_reason: str | None = None
    answer: str = ""
    older: frozenset[str] = frozenset()  # BEAM: the statement a newer one replaced or contradicts
    newer: frozenset[str] = frozenset()  # ... and the newer statement (both empty: no such order)


@dataclass(frozen=True)
class Conversation:
    """What goes into one scope, and the questions asked of it."""

    conversation_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    def turn_sessions(self) -> dict[str, str]:
        """Return turn id -> session id for every turn."""
        return {t.turn_id: s.session_id for s in self.sessions for t in s.turns}


@dataclass
class Dataset:
    """A benchmark: its name, how its categories are grouped, and its conversations (lazily)."""

    name: str
    source: str
    headline: tuple[str, ...] | None  # categories in the "all" group (None: every category)
    apart: tuple[str, ...] = ()  # categories reported separately, outside "all"
    conversations: Sequence[Conversation] | Iterator[Conversation] = field(default_factory=list)
    size: int = 0  # number of conversations (known before they are read)
    writes: str = "text"  # text: a document's text as the episode; sdk: a user turn and reply as the SDK writes them


# ------------------------------------------------------------------------------------------
# LoCoMo
# ------------------------------------------------------------------------------------------


def locomo_category(value: int | str) -> str:
    """Return the LoCoMo category name for its number (1 multi-hop, ... 5 adversarial)."""
    number = int(value)
    if number not in LOCOMO_CATEGORIES:
        raise ValueError(f"unknown LoCoMo category {value!r}")
    return LOCOMO_CATEGORIES[number]


def locomo_date(text: str) -> str:
    """Return a LoCoMo session date (``1:56 pm on 8 May, 2023``) as ISO 8601 UTC."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").strftime("%Y-%m-%dT%H:%M:%SZ")


def load_locomo(path: Path) -> Dataset:
    """Return the LoCoMo dataset of ``path`` (the ``locomo10.json`` list of samples)."""
    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(samples, list):
        raise ValueError(f"{path}: expected a JSON list of LoCoMo samples")
    conversations = [locomo_conversation(sample) for sample in samples]
    return Dataset(
        name="locomo",
        source=str(path),
        headline=LOCOMO_SCORED,
        apart=LOCOMO_APART,
        conversations=conversations,
        size=len(conversations),
    )


def locomo_conversation(sample: dict[str, Any]) -> Conversation:
    """Return one LoCoMo sample as a conversation (sessions in order, questions in order)."""
    conv = sample["conversation"]
    sessions = []
    n = 1
    while f"session_{n}" in conv:
        turns = tuple(
            Turn(turn_id=t["dia_id"], role=t["speaker"], text=f"{t['speaker']}: {t['text']}")
            for t in conv[f"session_{n}"]
        )
        sessions.append(Session(f"D{n}", locomo_date(conv[f"session_{n}_date_time"]), turns))
        n += 1
    known = {t.turn_id: s.session_id for s in sessions for t in s.turns}
    questions = []
    for i, qa in enumerate(sample["qa"]):
        ids = [e for e in parse_evidence(qa.get("evidence", [])) if e in known]
        questions.append(
            Question(
                question_id=f"{sample['sample_id']}#{i}",
                text=str(qa["question"]),
                category=locomo_category(qa["category"]),
                evidence_turns=frozenset(ids),
                evidence_sessions=frozenset(known[e] for e in ids),
                skip_reason=None if ids else "no usable evidence",
                answer=str(qa.get("answer", qa.get("adversarial_answer", ""))),
            )
        )
    return Conversation(str(sample["sample_id"]), tuple(sessions), tuple(questions))


# ------------------------------------------------------------------------------------------
# LongMemEval
# ------------------------------------------------------------------------------------------

_LME_DATE = re.compile(r"(\d{4})/(\d{2})/(\d{2})\s*(?:\([A-Za-z]+\))?\s*(\d{2}):(\d{2})")


def longmemeval_date(text: str) -> str:
    """Return a LongMemEval date (``2023/05/20 (Sat) 00:59``) as ISO 8601 UTC."""
    match = _LME_DATE.fullmatch(text.strip())
    if not match:
        raise ValueError(f"not a LongMemEval date: {text!r}")
    year, month, day, hour, minute = match.groups()
    return f"{year}-{month}-{day}T{hour}:{minute}:00Z"


def longmemeval_files(path: Path) -> list[Path]:
    """Return the question files of a LongMemEval folder (sorted), or ``[path]`` for one file."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.json") if p.is_file())
        if not files:
            raise ValueError(f"{path}: no .json files")
        return files
    if path.is_file():
        return [path]
    raise ValueError(f"{path}: no such file or folder")


def load_longmemeval(path: Path) -> Dataset:
    """Return the LongMemEval questions under ``path``, read lazily one file at a time.

    ``path`` is a folder of one-JSON-per-question files, or one JSON file holding a question
    or a list of them (the published ``longmemeval_s.json``).
    """
    files = longmemeval_files(path)
    size = len(files)
    if len(files) == 1:  # one file may hold many questions: count them now
        data = json.loads(files[0].read_text(encoding="utf-8"))
        size = len(data) if isinstance(data, list) else 1
    return Dataset(
        name="longmemeval",
        source=str(path),
        headline=None,
        conversations=_iter_longmemeval(files),
        size=size,
    )


def _iter_longmemeval(files: Sequence[Path]) -> Iterator[Conversation]:
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))
        for entry in data if isinstance(data, list) else [data]:
            yield longmemeval_conversation(entry)


def longmemeval_conversation(entry: dict[str, Any]) -> Conversation:
    """Return one LongMemEval question with its haystack as a conversation."""
    answer_sessions = set(entry["answer_session_ids"])
    sessions: list[Session] = []
    gold_turns: set[str] = set()
    gold_sessions: set[str] = set()
    for sid, date, raw in zip(
        entry["haystack_session_ids"], entry["haystack_dates"], entry["haystack_sessions"], strict=True
    ):
        turns = []
        for i, turn in enumerate(raw):
            is_user = turn["role"] == "user"
            tid = f"{sid}_{i + 1}"
            turns.append(Turn(turn_id=tid, role=turn["role"], text=str(turn["content"]), indexed=is_user))
            if is_user and sid in answer_sessions and turn.get("has_answer"):
                gold_turns.add(tid)
                gold_sessions.add(sid)
        sessions.append(Session(sid, longmemeval_date(date), tuple(turns)))
    qid = str(entry["question_id"])
    skip = None
    if "_abs" in qid:
        skip = "abstention"
    elif not gold_sessions:
        skip = "no user-turn evidence"
    question = Question(
        question_id=qid,
        text=str(entry["question"]),
        category=str(entry["question_type"]),
        evidence_turns=frozenset(gold_turns),
        evidence_sessions=frozenset(gold_sessions),
        skip_reason=skip,
        answer=str(entry.get("answer", "")),
    )
    return Conversation(qid, tuple(sessions), (question,))
