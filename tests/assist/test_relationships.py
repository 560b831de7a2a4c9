"""The links a model's work made are relationships of the knowledge plane: listed with a fact's
(or an episode's) relationships while they hold, with the verdict as their properties."""

from __future__ import annotations

from typing import Any

from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.derive import ReflectRequest
from engramdb.models.knowledge import LinkRequest, RecordWrite, RelationshipQuery
from engramdb.models.lifecycle import RejectDecision, ReviewDecision
from tests.assist.brain import Brain
from tests.assist.helpers import ADMIN, extract, fact, item, stated


def _related(service: MemoryService, caller: Caller, fact_id: str, **query: Any) -> list[tuple[str, str, str]]:
    found = service.record_reads.list_relationships(
        caller, RelationshipQuery.model_validate({"id": fact_id, "kind": "MEMORY_FACT", **query})
    )
    return [(r.type, r.source.id, r.target.id) for r in found.relationships]


def test_a_reflections_evidence_is_listed_from_both_ends(service: MemoryService, agent: Caller, brain: Brain) -> None:
    hikes = stated(service, agent, "The user hikes every Saturday.", kind="hobby", source="t1")
    kayaks = stated(service, agent, "The user kayaks on Sundays.", kind="sport", source="t2")
    brain.reflections = [
        {"text": "The user likes outdoor weekends.", "evidence": ["hikes", "kayaks"], "confidence": 0.7}
    ]
    habit = item(
        service.derivations.reflect(agent, ReflectRequest.model_validate({"subjectKey": "user"})).items, "outdoor"
    )
    reflection = habit.fact_id or ""
    assert sorted(_related(service, agent, reflection)) == sorted(
        [("DERIVED_FROM", reflection, hikes), ("DERIVED_FROM", reflection, kayaks)]
    )
    assert _related(service, agent, hikes) == [("DERIVED_FROM", reflection, hikes)]
    assert _related(service, agent, hikes, direction="out") == []
    assert _related(service, agent, reflection, type="REFINES") == []
    listed = service.record_reads.list_relationships(
        agent, RelationshipQuery(id=hikes, kind="MEMORY_FACT")
    ).relationships[0]
    assert listed.properties["by"] == "model" and listed.properties["state"] == "applied"
    assert listed.properties["promptVersion"].startswith("reflect.v")


def test_a_rejected_verdict_is_not_a_relationship_and_an_approved_one_is(
    service: MemoryService, agent: Caller, brain: Brain
) -> None:
    acme = stated(service, agent, "The user works at Acme.", kind="employer")
    brain.facts = [
        fact("user", "job", "The user works at Globex now."),
        fact("user", "role", "The user works at Acme as a manager now."),
    ]
    brain.verdicts = [
        {"about": "Globex", "of": "Acme", "verdict": "supersedes", "confidence": 0.9, "reason": "moved"},
        {"about": "manager", "of": "Acme.", "verdict": "supersedes", "confidence": 0.9},
    ]
    soon = {"observedAt": "2026-10-01T00:00:00Z"}
    result = extract(
        service,
        agent,
        turns=[
            {"userText": "The user works at Globex now.", **soon},
            {"userText": "The user works at Acme as a manager now.", **soon},
        ],
    )
    globex, manager = item(result, "Globex").fact_id or "", item(result, "manager").fact_id or ""
    # While both wait for review, their proposed verdicts are listed as such.
    assert sorted(_related(service, agent, acme)) == sorted(
        [("SUPERSEDES", globex, acme), ("SUPERSEDES", manager, acme)]
    )
    service.review.reject(ADMIN, manager, RejectDecision(reason="not said"))
    service.review.approve(ADMIN, globex, ReviewDecision())
    assert _related(service, agent, acme) == [("SUPERSEDES", globex, acme)]
    assert _related(service, agent, manager) == []
    applied = service.record_reads.list_relationships(
        agent, RelationshipQuery(id=globex, kind="MEMORY_FACT")
    ).relationships
    assert [(r.properties["verdict"], r.properties["state"], r.properties["confidence"]) for r in applied] == [
        ("supersedes", "applied", 0.9)
    ]
    assert applied[0].properties["reason"].startswith("moved")


def test_a_facts_relationships_and_a_models_links_page_as_one_list(
    service: MemoryService, agent: Caller, brain: Brain
) -> None:
    """A fact's list merges two stores: the knowledge plane's edges and the model's links. Read a
    relationship at a time, it is the same list, in the same order, as one page of all of it."""
    hikes = stated(service, agent, "The user hikes every Saturday.", kind="hobby", source="t1")
    kayaks = stated(service, agent, "The user kayaks on Sundays.", kind="sport", source="t2")
    brain.reflections = [{"text": "The user likes outdoor weekends.", "evidence": ["hikes", "kayaks"]}]
    reflection = (
        item(
            service.derivations.reflect(agent, ReflectRequest.model_validate({"subjectKey": "user"})).items, "outdoor"
        ).fact_id
        or ""
    )
    for title in ("trail map", "kayak rental", "weekend plan"):  # edges made after the model's links
        note = service.record_writes.write_records(
            agent, RecordWrite.model_validate({"label": "NOTE", "data": {"title": title}})
        ).records[0]
        link = {"source": note.id, "target": {"id": reflection, "kind": "MEMORY_FACT"}, "type": "ABOUT"}
        service.record_writes.link_records(agent, LinkRequest.model_validate(link))
    whole = _related(service, agent, reflection, limit=1000)
    assert len(whole) == 5 and [t for t, _, _ in whole].count("DERIVED_FROM") == 2
    one_by_one, cursor = [], None
    while True:
        page = service.record_reads.list_relationships(
            agent,
            RelationshipQuery.model_validate({"id": reflection, "kind": "MEMORY_FACT", "limit": 1, "cursor": cursor}),
        )
        one_by_one += [(r.type, r.source.id, r.target.id) for r in page.relationships]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert one_by_one == whole
    assert sorted(_related(service, agent, hikes)) == [("DERIVED_FROM", reflection, hikes)]  # the other end's
    assert kayaks in {target for _, _, target in whole}


def test_an_edge_whose_end_goes_between_two_reads_does_not_hide_the_next_one(
    service: MemoryService, agent: Caller, brain: Brain, monkeypatch: Any
) -> None:
    """A page reads its edges, then their ends' ids: a record deleted in between drops its edge from
    the page, and a model's link made later must not take the place of the edges not read yet."""
    hikes = stated(service, agent, "The user hikes every Saturday.", kind="hobby", source="t1")
    stated(service, agent, "The user kayaks on Sundays.", kind="sport", source="t2")
    notes = []
    for title in ("a", "b", "c"):  # edges to the fact first ...
        note = service.record_writes.write_records(
            agent, RecordWrite.model_validate({"label": "NOTE", "data": {"title": title}})
        ).records[0]
        link = {"source": note.id, "target": {"id": hikes, "kind": "MEMORY_FACT"}, "type": "ABOUT"}
        service.record_writes.link_records(agent, LinkRequest.model_validate(link))
        notes.append(note.id)
    brain.reflections = [{"text": "The user likes outdoor weekends.", "evidence": ["hikes", "kayaks"]}]
    service.derivations.reflect(agent, ReflectRequest.model_validate({"subjectKey": "user"}))  # ... a link after
    whole = _related(service, agent, hikes, limit=1000)
    assert [t for t, _, _ in whole] == ["ABOUT", "ABOUT", "ABOUT", "DERIVED_FROM"]
    tenant = service.shared.store.tenant("t1")
    resolve, reads = type(tenant).node_ids, []

    def b_gone_once(self: Any, nodes: Any) -> Any:  # note b deleted between the first page's two reads
        found = resolve(self, nodes)
        reads.append(1)
        return {n: i for n, i in found.items() if i != notes[1]} if len(reads) == 1 else found

    monkeypatch.setattr(type(tenant), "node_ids", b_gone_once)
    paged, cursor = [], None
    while True:
        query = {"id": hikes, "kind": "MEMORY_FACT", "limit": 2, "cursor": cursor}
        page = service.record_reads.list_relationships(agent, RelationshipQuery.model_validate(query))
        paged += [(r.type, r.source.id, r.target.id) for r in page.relationships]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert paged == [e for e in whole if e[1] != notes[1]]  # all but b's, c's among them
