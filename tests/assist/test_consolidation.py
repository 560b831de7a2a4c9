"""Consolidation: near-duplicates of one slot merged into one fact, the originals retired as
consolidated and linked, all audited, and undone through history."""

from __future__ import annotations

import pytest

from engramdb.contract.writes import FactWrite
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.errors import ConflictError
from engramdb.models.admin import AuditQuery
from engramdb.models.derive import ConsolidateRequest, ConsolidateResult, UndoConsolidation
from engramdb.models.lifecycle import FactHistoryQuery, ReviewDecision
from engramdb.models.memories import FactQuery, MemoryQuery, WriteOptions
from tests.assist.brain import Brain
from tests.assist.helpers import ADMIN, derived_current, extract, fact, item, state, stated
from tests.factories import fact_body

MERGED = "The user likes hiking in the mountains."


def _consolidate(service: MemoryService, caller: Caller, **body: object) -> ConsolidateResult:
    return service.derivations.consolidate(caller, ConsolidateRequest.model_validate({"kind": "likes", **body}))


def _seed(service: MemoryService, agent: Caller) -> tuple[str, str, str]:
    a = stated(service, agent, "The user likes hiking in the mountains", kind="likes", source="t1")
    b = stated(service, agent, "The user likes hiking in the mountains!!", kind="likes", source="t2")
    other = stated(service, agent, "The user likes opera", kind="likes", source="t3")
    return a, b, other


def _current(service: MemoryService, agent: Caller) -> list[str]:
    return sorted(f.event["text"] for f in service.reads.list_facts(agent, FactQuery(kind="likes")).facts)


def test_a_merge_retires_the_originals_as_consolidated_and_undo_brings_them_back(
    service: MemoryService, agent: Caller, brain: Brain
) -> None:
    derived_current(service)
    a, b, other = _seed(service, agent)
    brain.merge = {"merge": True, "text": MERGED, "confidence": 0.95, "reason": "the same preference"}
    result = _consolidate(service, agent, similarity=0.9)
    [group] = result.groups
    assert sorted(group.fact_ids) == sorted([a, b]) and group.action == "merged"
    merged = group.merged
    assert merged is not None and merged.action == "created" and merged.fact_id
    assert _current(service, agent) == sorted([MERGED, "The user likes opera"])
    for original in (a, b):
        view = service.reads.get_fact(agent, original, MemoryQuery())
        assert (view.status, view.superseded_by_fact_id) == ("superseded", merged.fact_id)
        assert view.status_reason == f"consolidated into {merged.fact_id}"
    assert state(service, agent, other) == "active"  # the positive control: not near, not touched
    links = service.assist.fact_links(agent, merged.fact_id, MemoryQuery()).links
    assert sorted((k.link_type, k.to_id, k.state) for k in links) == sorted(
        ("CONSOLIDATES", o, "applied") for o in (a, b)
    )
    history = service.reads.fact_history(agent, a, FactHistoryQuery())
    assert {v.id for v in history.versions} == {a, b, merged.fact_id}
    assert history.tombstones == []  # merged values were not wrong: nothing tombstoned

    undone = service.derivations.undo_consolidation(agent, merged.fact_id, UndoConsolidation(reason="different trips"))
    assert undone.merged.status == "archived" and sorted(r.id for r in undone.restored) == sorted([a, b])
    assert _current(service, agent) == sorted(
        ["The user likes hiking in the mountains", "The user likes hiking in the mountains!!", "The user likes opera"]
    )
    assert sorted(
        (k.link_type, k.state) for k in service.assist.fact_links(agent, merged.fact_id, MemoryQuery()).links
    ) == [
        ("CONSOLIDATES", "undone"),
        ("CONSOLIDATES", "undone"),
    ]
    actions = [e.action for e in service.admin.audit(ADMIN, AuditQuery(limit=500)).entries]
    assert actions.count("fact.restore") == 2 and "fact.archive" in actions
    with pytest.raises(ConflictError):  # undone once: nothing left to undo
        service.derivations.undo_consolidation(agent, merged.fact_id, UndoConsolidation(reason="again"))


def test_under_review_the_originals_stay_current_until_the_merge_is_approved(
    service: MemoryService, agent: Caller, brain: Brain
) -> None:
    a, b, _ = _seed(service, agent)
    brain.merge = {"merge": True, "text": MERGED, "confidence": 0.95}
    [group] = _consolidate(service, agent, similarity=0.9).groups
    assert group.action == "proposed" and group.merged is not None and group.merged.action == "parked"
    assert state(service, agent, a) == state(service, agent, b) == "active"
    with pytest.raises(ConflictError) as waiting:
        service.derivations.undo_consolidation(agent, group.merged.fact_id or "", UndoConsolidation(reason="x"))
    assert "review" in waiting.value.message
    service.review.approve(ADMIN, group.merged.fact_id or "", ReviewDecision())
    assert state(service, agent, a) == state(service, agent, b) == "superseded"
    assert _current(service, agent) == sorted([MERGED, "The user likes opera"])


def test_a_dry_run_writes_nothing_and_a_kept_group_stays(service: MemoryService, agent: Caller, brain: Brain) -> None:
    a, b, _ = _seed(service, agent)
    brain.merge = {"merge": True, "text": MERGED}
    dry = _consolidate(service, agent, similarity=0.9, dryRun=True)
    assert [g.action for g in dry.groups] == ["would_merge"] and dry.usage.calls == 1
    brain.merge = {"merge": False, "reason": "one is about winter"}
    kept = _consolidate(service, agent, similarity=0.9)
    assert [(g.action, g.reason) for g in kept.groups] == [("kept", "one is about winter")]
    assert state(service, agent, a) == state(service, agent, b) == "active" and len(_current(service, agent)) == 3


def test_only_stated_facts_are_consolidated(service: MemoryService, agent: Caller, brain: Brain) -> None:
    derived_current(service)
    for source in ("d1", "d2"):  # near-duplicates a model wrote: never the basis of another derivation
        body = fact_body("The user likes chess", kind="likes", sourceEventId=source)
        service.writes.write_fact(agent, FactWrite.model_validate(body), WriteOptions(origin="derived"))
    assert _consolidate(service, agent, similarity=0.9).groups == []
    assert brain.asked("consolidate") == []


def _derived():  # type: ignore[no-untyped-def]
    from engramdb.models.memories import WriteOptions

    return WriteOptions(origin="derived")


def test_a_value_merged_away_is_not_extracted_again(service: MemoryService, agent: Caller, brain: Brain) -> None:
    derived_current(service)
    _seed(service, agent)
    brain.merge = {"merge": True, "text": "The user loves mountain hikes."}  # other words than the originals'
    [group] = _consolidate(service, agent, similarity=0.9).groups
    assert group.action == "merged"

    brain.facts = [
        fact("user", "likes", "The user likes hiking in the mountains!!"),
        fact("user", "likes", "The user likes sailing."),
    ]  # the positive control
    result = extract(service, agent, "The user likes hiking in the mountains!! The user likes sailing.")
    again = item(result, "mountains")
    assert again.action == "duplicate" and "merged into" in again.reason
    assert item(result, "sailing").action == "created"
