"""Conflict judgement: a candidate against the nearest current facts of its scope, through the
scripted model. Supersede only at or above the policy's threshold, never against the age guard,
never outside the writer's scope; refines keeps both; duplicate writes nothing."""

from __future__ import annotations

from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.admin import AuditQuery
from engramdb.models.lifecycle import RejectDecision, ReviewDecision, ReviewQuery
from engramdb.models.memories import MemoryQuery
from engramdb.models.policy import TenantPolicy
from tests.assist.brain import Brain
from tests.assist.helpers import ADMIN, derived_current, extract, fact, item, state, stated
from tests.factories import scope_fields

SOON = {"observedAt": "2026-10-01T00:00:00Z"}  # after the stated facts (validFrom 2026-08-18)


def _links(service: MemoryService, caller: Caller, fact_id: str) -> list[tuple[str, str, str]]:
    return [
        (link.link_type, link.to_id, link.state)
        for link in service.assist.fact_links(caller, fact_id, MemoryQuery()).links
    ]


def _audit_reasons(service: MemoryService, action: str) -> list[str]:
    return [e.reason or "" for e in service.admin.audit(ADMIN, AuditQuery(action=action, limit=500)).entries]


def test_supersedes_acts_at_or_above_the_threshold_and_not_below(
    service: MemoryService, agent: Caller, brain: Brain
) -> None:
    derived_current(service)
    berlin = stated(service, agent, "The user works at Acme in Berlin.", subject="user", kind="employer")
    rome = stated(
        service, agent, "The user's office is in Rome, near the Acme branch.", subject="office", kind="location"
    )
    brain.facts = [
        fact("user", "job", "The user now works at Globex in Berlin."),
        fact("office", "city", "The user's office moved to Milan, near the Acme branch."),
    ]
    brain.verdicts = [
        {"about": "Globex", "of": "Acme in Berlin", "verdict": "supersedes", "confidence": 0.8},
        {"about": "Milan", "of": "Rome", "verdict": "supersedes", "confidence": 0.6},
    ]
    result = extract(
        service,
        agent,
        turns=[
            {"userText": "The user now works at Globex in Berlin.", **SOON},
            {"userText": "The user's office moved to Milan, near the Acme branch.", **SOON},
        ],
    )
    globex, milan = item(result, "Globex"), item(result, "Milan")
    assert (globex.action, globex.superseded_fact_ids) == ("updated", [berlin])  # 0.8 >= 0.75
    assert state(service, agent, berlin) == "superseded"
    assert milan.action == "created" and milan.superseded_fact_ids == []  # 0.6 < 0.75: both stand
    assert state(service, agent, rome) == "active"
    assert [v.applied for v in milan.verdicts] == [False] and "threshold" in (milan.verdicts[0].note or "")
    assert _links(service, agent, globex.fact_id or "") == [("SUPERSEDES", berlin, "applied")]
    assert _links(service, agent, milan.fact_id or "") == [("SUPERSEDES", rome, "refused")]
    reasons = _audit_reasons(service, "model.verdict")
    assert any(r.startswith("supersedes (0.80)") and "judge.v1#" in r for r in reasons)
    assert any(r.startswith("supersedes (0.60)") and "threshold" in r for r in reasons)


def test_the_threshold_is_the_tenants_policy(service: MemoryService, agent: Caller, brain: Brain) -> None:
    derived_current(service)
    policy = service.admin.get_policy(ADMIN).model_copy(update={"model_supersede_threshold": 0.5})
    service.admin.put_policy(ADMIN, TenantPolicy.model_validate(policy.wire()))
    rome = stated(service, agent, "The user's office is in Rome.", subject="office", kind="location")
    brain.facts = [fact("office", "city", "The user's office moved to Milan.")]
    brain.verdicts = [{"about": "Milan", "of": "Rome", "verdict": "supersedes", "confidence": 0.6}]
    milan = item(extract(service, agent, turns=[{"userText": "The user's office moved to Milan.", **SOON}]), "Milan")
    assert milan.superseded_fact_ids == [rome] and state(service, agent, rome) == "superseded"


def test_the_age_guard_refuses_a_model_that_wants_an_older_fact_to_win(
    service: MemoryService, agent: Caller, brain: Brain
) -> None:
    derived_current(service)
    newer = stated(
        service,
        agent,
        "The user's team uses Rust for the backend.",
        subject="team",
        kind="language",
        valid_from="2026-10-01T00:00:00Z",
    )
    brain.facts = [fact("project", "stack", "The user's team uses Go for the backend.")]
    brain.verdicts = [{"about": "Go", "of": "Rust", "verdict": "supersedes", "confidence": 0.99}]
    old_turn = {"userText": "The user's team uses Go for the backend.", "observedAt": "2026-05-01T00:00:00Z"}
    go = item(extract(service, agent, turns=[old_turn]), "Go for")
    assert go.action == "history" and go.status == "superseded"  # kept, never current
    assert state(service, agent, newer) == "active"  # the newer fact still holds
    assert "age guard" in (go.verdicts[0].note or "")
    assert _links(service, agent, go.fact_id or "") == [("SUPERSEDES", newer, "refused")]


def test_under_review_the_age_guard_acts_at_approval(service: MemoryService, agent: Caller, brain: Brain) -> None:
    newer = stated(
        service, agent, "The user's team uses Rust.", subject="team", kind="language", valid_from="2026-10-01T00:00:00Z"
    )
    brain.facts = [fact("project", "stack", "The user's team uses Go.")]
    brain.verdicts = [{"about": "Go", "of": "Rust", "verdict": "supersedes", "confidence": 0.99}]
    go = item(
        extract(service, agent, turns=[{"userText": "The user's team uses Go.", "observedAt": "2026-05-01T00:00:00Z"}]),
        "Go",
    )
    assert go.action == "parked" and state(service, agent, newer) == "active"
    assert _links(service, agent, go.fact_id or "") == [("SUPERSEDES", newer, "proposed")]
    approved = service.review.approve(ADMIN, go.fact_id or "", ReviewDecision())
    assert approved.outcome == "history" and state(service, agent, newer) == "active"
    assert _links(service, agent, go.fact_id or "") == [("SUPERSEDES", newer, "refused")]


def test_a_proposed_supersession_acts_when_approved_and_never_when_rejected(
    service: MemoryService, agent: Caller, brain: Brain
) -> None:
    acme = stated(service, agent, "The user works at Acme.", kind="employer")
    brain.facts = [
        fact("user", "job", "The user works at Globex now."),
        fact("user", "role", "The user works at Acme as a manager now."),
    ]
    brain.verdicts = [
        {"about": "Globex", "of": "Acme", "verdict": "supersedes", "confidence": 0.9},
        {"about": "manager", "of": "Acme.", "verdict": "supersedes", "confidence": 0.9},
    ]
    result = extract(
        service,
        agent,
        turns=[
            {"userText": "The user works at Globex now.", **SOON},
            {"userText": "The user works at Acme as a manager now.", **SOON},
        ],
    )
    globex, manager = item(result, "Globex"), item(result, "manager")
    assert globex.action == manager.action == "parked" and state(service, agent, acme) == "active"
    service.review.reject(ADMIN, manager.fact_id or "", RejectDecision(reason="not said"))
    assert _links(service, agent, manager.fact_id or "") == [("SUPERSEDES", acme, "rejected")]
    assert state(service, agent, acme) == "active"
    approved = service.review.approve(ADMIN, globex.fact_id or "", ReviewDecision())
    assert approved.superseded_fact_ids == [acme] and state(service, agent, acme) == "superseded"
    assert _links(service, agent, globex.fact_id or "") == [("SUPERSEDES", acme, "applied")]


def test_refines_keeps_both_and_links_them(service: MemoryService, agent: Caller, brain: Brain) -> None:
    derived_current(service)
    hikes = stated(service, agent, "The user likes hiking.", kind="likes")
    brain.facts = [fact("user", "likes", "The user likes hiking in the Alps in summer.")]
    brain.verdicts = [
        {"about": "Alps", "of": "hiking.", "verdict": "refines", "confidence": 0.9, "reason": "adds where and when"}
    ]
    alps = item(
        extract(service, agent, turns=[{"userText": "The user likes hiking in the Alps in summer.", **SOON}]), "Alps"
    )
    assert alps.action == "created" and alps.superseded_fact_ids == []
    assert state(service, agent, hikes) == state(service, agent, alps.fact_id or "") == "active"
    links = service.assist.fact_links(agent, alps.fact_id or "", MemoryQuery()).links
    assert [(k.link_type, k.to_id, k.state, k.reason) for k in links] == [
        ("REFINES", hikes, "applied", "adds where and when")
    ]
    # The link is visible from the refined fact too.
    assert [k.from_id for k in service.assist.fact_links(agent, hikes, MemoryQuery()).links] == [alps.fact_id]


def test_duplicate_writes_nothing(service: MemoryService, agent: Caller, brain: Brain) -> None:
    stated(service, agent, "The user enjoys hiking trips.", kind="likes")
    brain.facts = [
        fact("user", "hobby", "The user loves going hiking."),
        fact("user", "hobby", "The user plays chess."),
    ]  # the positive control: not a duplicate
    brain.verdicts = [{"about": "loves going hiking", "of": "hiking trips", "verdict": "duplicate", "confidence": 0.9}]
    result = extract(service, agent, "The user loves going hiking. The user plays chess.")
    hiking = item(result, "loves going hiking")
    assert hiking.action == "duplicate" and hiking.status == "active"
    assert item(result, "chess").action == "parked"
    pending = [r.fact.event["text"] for r in service.review.review_queue(ADMIN, ReviewQuery()).items]
    assert pending == ["The user plays chess."]
    assert any(r.startswith("duplicate (0.90)") for r in _audit_reasons(service, "model.verdict"))


def test_a_model_answering_for_another_scope_changes_nothing_there(
    service: MemoryService, agent: Caller, brain: Brain
) -> None:
    derived_current(service)
    bob = Caller(tenant="t1", key_id="bob-key", role="agent", grant=scope_fields(participantScopeHash="b" * 64))
    bobs = stated(service, bob, "The user works at Acme.", kind="employer")  # the same words, another scope
    mine = stated(service, agent, "The user works at Acme.", kind="employer")
    assert bobs != mine
    brain.facts = [fact("user", "job", "The user works at Globex now.")]
    # The model names bob's fact by its id (as if it had seen it), and ours by a ref it was not shown.
    brain.verdicts = [
        {"about": "Globex", "ref": bobs, "verdict": "supersedes", "confidence": 0.99},
        {"about": "Globex", "ref": "n9", "verdict": "supersedes", "confidence": 0.99},
    ]
    globex = item(extract(service, agent, turns=[{"userText": "The user works at Globex now.", **SOON}]), "Globex")
    assert state(service, bob, bobs) == "active"  # untouched
    assert globex.superseded_fact_ids == [] and globex.verdicts == []
    assert "ignored" in globex.reason and bobs[:12] in globex.reason
    assert state(service, agent, mine) == "active"
    ignored = _audit_reasons(service, "model.verdict.ignored")
    assert len(ignored) == 2 and all("ignored" in r for r in ignored)
    # Positive control: naming the fact it was shown (our own) does supersede it.
    brain.facts = [fact("user", "job", "The user works at Initech now.")]
    brain.verdicts = [{"about": "Initech", "of": "Acme", "verdict": "supersedes", "confidence": 0.99}]
    initech = item(extract(service, agent, turns=[{"userText": "The user works at Initech now.", **SOON}]), "Initech")
    # (it also replaces Globex: the same subject and kind hold one current value)
    assert set(initech.superseded_fact_ids) == {mine, globex.fact_id} and state(service, bob, bobs) == "active"
    shown = [n["text"] for c in brain.asked("judge")[-1]["candidates"] for n in c["neighbours"]]
    assert sorted(shown) == ["The user works at Acme.", "The user works at Globex now."]  # ours; never bob's


def test_no_judgement_when_the_policy_asks_for_none(service: MemoryService, agent: Caller, brain: Brain) -> None:
    policy = service.admin.get_policy(ADMIN).model_copy(update={"model_neighbours": 0})
    service.admin.put_policy(ADMIN, TenantPolicy.model_validate(policy.wire()))
    stated(service, agent, "The user works at Acme.", kind="employer")
    brain.facts = [fact("user", "job", "The user works at Globex now.")]
    globex = item(extract(service, agent, "The user works at Globex now."), "Globex")
    assert globex.action == "parked" and brain.asked("judge") == []
    assert state(service, agent, globex.fact_id or "") == "pending_review"
    assert (
        service.reads.get_fact(agent, globex.fact_id or "", MemoryQuery()).embedding.state == "pending"
    )  # the worker's
