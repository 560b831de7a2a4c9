"""Reflection over current, stated facts: derived, reviewable, linked to its evidence, never
resting on a derived fact; recall marks it."""

from __future__ import annotations

import pytest

from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.errors import ConflictError
from engramdb.models.derive import ReflectRequest
from engramdb.models.lifecycle import ReviewDecision
from engramdb.models.memories import MemoryQuery
from engramdb.models.recall import RecallRequest
from tests.assist.brain import Brain
from tests.assist.helpers import ADMIN, extract, fact, item, state, stated

HABIT = "The user seems to prefer outdoor activities at weekends."


def _reflect(service: MemoryService, caller: Caller, **body: object) -> object:
    return service.derivations.reflect(caller, ReflectRequest.model_validate(body))


def _seed(service: MemoryService, agent: Caller) -> list[str]:
    return [
        stated(service, agent, "The user hikes every Saturday.", kind="hobby", source="t1"),
        stated(service, agent, "The user kayaks on Sundays.", kind="sport", source="t2"),
    ]


def test_a_reflection_is_derived_pending_linked_to_its_evidence_and_marked_by_recall(
    service: MemoryService, agent: Caller, brain: Brain
) -> None:
    evidence = _seed(service, agent)
    brain.reflections = [{"text": HABIT, "evidence": ["hikes", "kayaks"], "confidence": 0.7}]
    result = service.derivations.reflect(agent, ReflectRequest.model_validate({"subjectKey": "user"}))
    habit = item(result.items, "outdoor")
    assert (habit.action, habit.kind, habit.subject_key) == ("parked", "reflection", "user")
    assert sorted(result.evidence_fact_ids) == sorted(evidence)
    stored = service.reads.get_fact(agent, habit.fact_id or "", MemoryQuery())
    assert stored.origin == "derived" and (result.prompt_version or "x") in stored.event["provenance"]
    links = service.assist.fact_links(agent, habit.fact_id or "", MemoryQuery()).links
    assert sorted((k.link_type, k.to_id, k.state) for k in links) == sorted(
        ("DERIVED_FROM", e, "applied") for e in evidence
    )
    service.review.approve(ADMIN, habit.fact_id or "", ReviewDecision())
    recalled = service.reads.recall(agent, RecallRequest.model_validate({"query": "outdoor activities at weekends"}))
    top = recalled.memories[0]
    assert (top.id, top.origin, top.kind) == (habit.fact_id, "derived", "reflection")
    assert "origin=derived" in recalled.context and "unverified" in recalled.context.split("\n")[2]


def test_derived_facts_are_never_evidence(service: MemoryService, agent: Caller, brain: Brain) -> None:
    stated_ids = _seed(service, agent)
    brain.facts = [fact("user", "climbing", "The user climbs on Fridays.")]
    climb = item(extract(service, agent, "The user climbs on Fridays."), "climbs")
    service.review.approve(ADMIN, climb.fact_id or "", ReviewDecision())  # derived, and current
    assert state(service, agent, climb.fact_id or "") == "active"
    # Named explicitly: refused, nothing asked of the model.
    with pytest.raises(ConflictError) as refused:
        _reflect(service, agent, factIds=[*stated_ids, climb.fact_id])
    assert refused.value.field == "factIds" and "derived" in refused.value.message
    assert brain.asked("reflect") == []
    # By subject: the derived fact is not shown; the stated ones are (the positive control).
    brain.reflections = [{"text": HABIT, "evidence": ["hikes", "kayaks", "climbs"]}]
    result = service.derivations.reflect(agent, ReflectRequest.model_validate({"subjectKey": "user"}))
    shown = [f["text"] for f in brain.asked("reflect")[0]["facts"]]
    assert sorted(shown) == ["The user hikes every Saturday.", "The user kayaks on Sundays."]
    assert climb.fact_id not in result.evidence_fact_ids
    # A reflection, once approved, is derived too: a second reflection does not rest on it.
    service.review.approve(ADMIN, item(result.items, "outdoor").fact_id or "", ReviewDecision())
    service.derivations.reflect(agent, ReflectRequest.model_validate({"subjectKey": "user"}))
    assert HABIT not in [f["text"] for f in brain.asked("reflect")[1]["facts"]]


def test_evidence_the_model_was_not_shown_is_not_evidence(service: MemoryService, agent: Caller, brain: Brain) -> None:
    _seed(service, agent)
    brain.reflections = [
        {"text": "The user invented this.", "refs": ["e99", "x"]},
        {"text": HABIT, "evidence": ["hikes", "kayaks"]},
    ]
    result = service.derivations.reflect(agent, ReflectRequest.model_validate({}))
    invented = item(result.items, "invented")
    assert invented.action == "skipped" and "names no fact" in invented.reason
    assert item(result.items, "outdoor").action == "parked"


def test_a_time_range_and_too_little_evidence(service: MemoryService, agent: Caller, brain: Brain) -> None:
    _seed(service, agent)
    late = _reflect(service, agent, after="2026-09-01T00:00:00Z")
    assert late.items == [] and late.evidence_fact_ids == [] and brain.asked("reflect") == []  # type: ignore[attr-defined]
    brain.reflections = [{"text": HABIT, "evidence": ["hikes", "kayaks"]}]
    early = _reflect(service, agent, before="2026-09-01T00:00:00Z")
    assert len(early.evidence_fact_ids) == 2 and len(early.items) == 1  # type: ignore[attr-defined]
