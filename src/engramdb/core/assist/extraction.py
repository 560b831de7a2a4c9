"""Extraction: turns -> candidate facts, screened against what the scope already holds.

A candidate is dropped before any write when it says what a current or pending fact of its slot
says, what a fact merged away by consolidation said, or a value the scope tombstoned (in any
slot): a corrected-away value is not proposed again. What survives is judged (judgement.py) and
written through the fact lifecycle as origin ``derived`` (writing.py).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field

from engramdb import clock
from engramdb.contract.canonical import sha256_hex
from engramdb.core.assist.llm import answers, prompts
from engramdb.core.assist.work import Work
from engramdb.core.tombstones import value_hash
from engramdb.errors import InvalidInputError, NotFoundError
from engramdb.models.assist import DerivedItem, ExtractRequest, VerdictView
from engramdb.storage.assist.port import SlotText
from engramdb.storage.port import MemoryRecord, Vector

MIN_TEXT = 5
SLOTS_SHOWN = 100  # the scope's slots the extraction prompt lists, so the model reuses their keys
# Screening hashes every fact of a slot once per candidate; the same texts come back run after run.
value_of = functools.lru_cache(maxsize=100_000)(value_hash)
EXTRACT = prompts.load("extract", answers.envelope("facts", answers.ExtractedFact), answers.items_under("facts"))
SLOT_STATUSES = ("active", "pending_review", "superseded")


@dataclass
class Judged:
    """A model's verdict on a candidate against one fact shown with it."""

    neighbour: MemoryRecord
    verdict: str
    confidence: float
    reason: str
    acts: bool  # at or above the policy's threshold (refines and coexists always act)
    note: str | None = None

    def view(self) -> VerdictView:
        return VerdictView(
            fact_id=self.neighbour.memory_id,
            verdict=self.verdict,
            confidence=self.confidence,
            reason=self.reason,
            applied=self.acts,
            note=self.note,
        )


@dataclass(frozen=True)
class Turn:
    """A turn as extraction reads it: stored episode or given text."""

    source_event_id: str
    user_text: str
    assistant_text: str
    observed_at: str
    trust_class: str
    runtime: str = "custom"


@dataclass
class Candidate:
    """A fact the model proposed, on its way through screening, judgement and the lifecycle."""

    turn: Turn
    subject_key: str
    kind: str
    text: str
    confidence: float
    judged: list[Judged] = field(default_factory=list)  # the model's verdicts on it
    target_id: str | None = None  # the current fact a supersedes verdict (at or above the threshold) names
    duplicate_of: MemoryRecord | None = None  # a current fact a duplicate verdict names
    ignored: list[str] = field(default_factory=list)  # verdicts that named no fact shown with it
    evidence: list[MemoryRecord] = field(default_factory=list)  # what a reflection or a merge rests on
    vector: Vector | None = None  # its text's embedding (judgement made it; the written fact keeps it)

    @property
    def value(self) -> str:
        return value_of(self.text)

    def item(self, action: str, reason: str, **more: object) -> DerivedItem:
        return DerivedItem.model_validate(
            {
                "action": action,
                "subject_key": self.subject_key,
                "kind": self.kind,
                "text": self.text,
                "confidence": self.confidence,
                "source_event_id": self.turn.source_event_id,
                "reason": reason,
                "verdicts": [j.view() for j in self.judged],
                **more,
            }
        )


def turns_for(work: Work, body: ExtractRequest) -> list[Turn]:
    """The turns a request names: given text, or stored episodes of the scope (oldest first)."""
    now = clock.now_text()
    if body.text is not None:
        return [_given(body.text, "", None, None, now, body.trust_class)]
    if body.turns is not None:
        return [
            _given(t.user_text, t.assistant_text, t.source_event_id, t.observed_at, now, body.trust_class)
            for t in body.turns
        ]
    if body.episode_ids is not None:
        return [_episode_turn(_episode(work, event_id)) for event_id in body.episode_ids]
    episodes = work.tenant.list_episodes(
        work.scope_key, session_id=body.session_id, after=None, before=None, below=None, limit=50
    )
    if not episodes:
        raise NotFoundError(f"no episodes of session {body.session_id!r} in this scope", field="sessionId")
    return [_episode_turn(e) for e in reversed(episodes)]


def _given(user: str, assistant: str, source: str | None, observed: str | None, now: str, trust: str) -> Turn:
    if not (user.strip() or assistant.strip()):
        raise InvalidInputError("a turn says nothing: userText and assistantText are blank", field="turns")
    digest = sha256_hex(f"{user}\x1f{assistant}")[:32]
    return Turn(source or f"turn:{digest}", user, assistant, clock.normalize(observed) if observed else now, trust)


def _episode(work: Work, event_id: str) -> MemoryRecord:
    record = work.tenant.get_memory(work.scope_key, "EPISODE", event_id)
    if record is None:
        raise NotFoundError(f"no episode {event_id} in this scope", field="episodeIds", id=event_id)
    return record


def _episode_turn(record: MemoryRecord) -> Turn:
    event = json.loads(record.event_json)
    user, assistant = event.get("userText", ""), event.get("assistantText", "")
    if not (user.strip() or assistant.strip()):
        user = event.get("summary", "")
    runtime = event.get("runtime", "custom")
    return Turn(record.memory_id, user, assistant, record.observed_at, record.trust_class, runtime)


def propose(work: Work, turns: list[Turn]) -> tuple[list[Candidate], list[DerivedItem]]:
    """Ask the model for candidate facts; return the usable ones and why the others are not."""
    data = {
        "turns": [
            {"turn": i, "observedAt": t.observed_at, "user": t.user_text, "assistant": t.assistant_text}
            for i, t in enumerate(turns)
        ],
        "existingSlots": [{"subjectKey": s, "kind": k} for s, k in work.tenant.slots(work.scope_key, SLOTS_SHOWN)],
    }
    good, bad = answers.read_items(answers.ExtractedFact, work.ask(EXTRACT, data))
    skipped = [DerivedItem(action="skipped", reason=f"the model's fact #{i} is not usable: {why}") for i, why in bad]
    candidates: list[Candidate] = []
    for index, fact in good:
        if fact.turn >= len(turns):
            skipped.append(
                DerivedItem(
                    action="skipped",
                    text=fact.text,
                    reason=f"the model's fact #{index} names turn {fact.turn}, which the data does not have",
                )
            )
            continue
        candidate = Candidate(
            turns[fact.turn],
            fact.subject_key.strip(),
            fact.kind.strip().lower(),
            " ".join(fact.text.split()),
            fact.confidence,
        )
        if len(candidate.text) < MIN_TEXT or not candidate.subject_key or not candidate.kind:
            skipped.append(candidate.item("skipped", "too short to be a fact, or no subject or kind"))
            continue
        candidates.append(candidate)
    return candidates, skipped


def screen(work: Work, candidates: list[Candidate]) -> tuple[list[Candidate], list[DerivedItem]]:
    """Drop candidates the scope already holds (current, pending, merged away) or refused."""
    fresh: list[Candidate] = []
    dropped: list[DerivedItem] = []
    seen: set[tuple[str, str, str]] = set()
    tombs = {t.value_hash: t for t in work.tombstones}
    for candidate in candidates:
        key = (candidate.subject_key, candidate.kind, candidate.value)
        tomb = tombs.get(candidate.value)
        same = _same_value(work, candidate)
        if key in seen:
            dropped.append(candidate.item("duplicate", "the model proposed it twice"))
        elif tomb is not None:
            dropped.append(
                candidate.item(
                    "refused",
                    f"this value was corrected away in this scope "
                    f"({tomb.subject_key}/{tomb.kind}: {tomb.reason or 'no reason given'}; "
                    f"tombstone {tomb.tombstone_id})",
                )
            )
        elif same is not None:
            dropped.append(candidate.item("duplicate", _says_what(same), fact_id=same.memory_id, status=same.status))
        else:
            fresh.append(candidate)
        seen.add(key)
    return fresh, dropped


def _same_value(work: Work, candidate: Candidate) -> SlotText | None:
    slot = work.tenant.slot_texts(work.scope_key, candidate.subject_key, candidate.kind, SLOT_STATUSES)
    return next((f for f in slot if value_of(f.text) == candidate.value and _holds_value(f)), None)


def _holds_value(fact: SlotText) -> bool:
    """Current, pending, or merged into another fact by consolidation (its value lives on there)."""
    return fact.status != "superseded" or (fact.status_reason or "").startswith("consolidated into")


def _says_what(fact: SlotText) -> str:
    if fact.status == "superseded":
        return f"a fact with this value was merged into {fact.superseded_by_id} by consolidation"
    return f"fact {fact.memory_id} ({fact.status}) of the same subject and kind says the same"
