"""Recall's one-hop expansion, on both backends: a fact brings its episode, an episode its facts
and the records linked to it; nothing retired comes back that way."""

from __future__ import annotations

from typing import Any

import pytest

from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.knowledge import LinkRequest, RecordWrite
from engramdb.models.lifecycle import RetractRequest
from engramdb.models.recall import RecallRequest, RecallResponse
from tests.factories import episode_body, fact_body, scope_fields

MINE = scope_fields()


def _episode(service: MemoryService, caller: Caller, text: str, turn: int, session: str = "budget") -> str:
    body = episode_body(text, "Noted.", turn=turn, session=session, scope=MINE)
    return service.writes.write_episode(caller, EpisodeWrite.model_validate(body)).id


def _fact(service: MemoryService, caller: Caller, text: str, kind: str, source: str) -> str:
    body = fact_body(text, kind=kind, sourceEventId=source, scope=MINE)
    return service.writes.write_fact(caller, FactWrite.model_validate(body)).id


def _recall(service: MemoryService, caller: Caller, query: str, **options: Any) -> RecallResponse:
    return service.reads.recall(caller, RecallRequest.model_validate({"query": query, "scope": MINE, **options}))


def _world(service: MemoryService, caller: Caller) -> dict[str, str]:
    ids = {"turn": _episode(service, caller, "We talked about the quarterly budget spreadsheet", 1)}
    ids["fact"] = _fact(service, caller, "The invoice service is written in Go", "invoice-language", ids["turn"])
    for i in range(2, 8):  # unrelated turns, so the linked one is not simply among the hits
        _episode(service, caller, f"Small talk about the weather on day {i}", i, "chat")
    drain(service.shared.store.tenant("t1"), service.shared.embedder)
    return ids


def test_a_fact_brings_the_episode_it_came_from(service: MemoryService, operator: Caller) -> None:
    ids = _world(service, operator)
    plain = _recall(service, operator, "invoice service language", limit=3)
    assert plain.memories[0].id == ids["fact"] and plain.records is None and "expandMs" not in plain.timings
    top = plain.memories[0].score
    assert all(m.linked is None and m.score < top / 2 for m in plain.memories[1:])
    expanded = _recall(service, operator, "invoice service language", limit=3, expand=1)
    assert [m.id for m in expanded.memories[:2]] == [ids["fact"], ids["turn"]] and "expandMs" in expanded.timings
    turn = expanded.memories[1]
    assert turn.linked is not None and (turn.linked.type, turn.linked.memory_id) == ("DERIVED_FROM", ids["fact"])
    assert turn.score == pytest.approx(top * service.shared.settings.retrieval.expand_weight)
    assert expanded.memories[0].linked is None and len(expanded.memories) == 3


def test_an_episode_brings_its_facts_and_linked_records(service: MemoryService, operator: Caller) -> None:
    ids = _world(service, operator)
    decision = service.record_writes.write_records(
        operator,
        RecordWrite.model_validate(
            {"label": "DECISION", "data": {"title": "Freeze the budget until March"}, "scope": MINE}
        ),
    ).records[0]
    service.record_writes.link_records(
        operator,
        LinkRequest.model_validate(
            {"source": {"id": ids["turn"], "kind": "EPISODE"}, "target": decision.id, "type": "PRODUCES", "scope": MINE}
        ),
    )
    expanded = _recall(service, operator, "quarterly budget spreadsheet", limit=3, expand=1)
    assert expanded.memories[0].id == ids["turn"]
    assert ids["fact"] in [m.id for m in expanded.memories]
    assert expanded.records is not None and [r.id for r in expanded.records] == [decision.id]
    assert (expanded.records[0].linked.type, expanded.records[0].linked.memory_id) == ("PRODUCES", ids["turn"])
    assert "source=DECISION" in expanded.context and "Freeze the budget until March" in expanded.context
    assert "source=DECISION" not in _recall(service, operator, "quarterly budget spreadsheet", limit=3).context


def test_a_retracted_fact_never_returns_through_a_link(service: MemoryService, operator: Caller) -> None:
    ids = _world(service, operator)
    kept = _fact(service, operator, "The budget owner is Dana", "budget-owner", ids["turn"])
    service.writes.retract_fact(
        operator, ids["fact"], RetractRequest.model_validate({"reason": "wrong", "scope": MINE})
    )
    expanded = _recall(service, operator, "quarterly budget spreadsheet", limit=5, expand=1)
    found = [m.id for m in expanded.memories]
    assert found[0] == ids["turn"] and kept in found  # the positive control: a current linked fact comes
    assert ids["fact"] not in found
    history = _recall(service, operator, "quarterly budget spreadsheet", limit=5, expand=1, includeHistory=True)
    assert ids["fact"] in [m.id for m in history.memories]  # asked for history, it is there, marked


def test_filters_and_min_score_hold_for_linked_memories(service: MemoryService, operator: Caller) -> None:
    ids = _world(service, operator)
    query = "invoice service language"
    expanded = _recall(service, operator, query, limit=3, expand=1)
    fact, turn = expanded.memories[:2]
    assert (fact.id, turn.id) == (ids["fact"], ids["turn"])  # the positive control: the link brings the turn
    lent = fact.relevance * service.shared.settings.retrieval.expand_weight
    assert turn.relevance == pytest.approx(lent, abs=1e-6) and 0 < turn.relevance < fact.relevance
    # A filter the turn fails (it is no fact of that kind) keeps it out, link or not.
    kinds = _recall(service, operator, query, limit=3, expand=1, kinds=["invoice-language"])
    assert [m.id for m in kinds.memories] == [ids["fact"]]
    # A floor between the two: the fact stays, the turn it links is below the floor and stays out.
    floor = (turn.relevance + fact.relevance) / 2
    floored = _recall(service, operator, query, limit=3, expand=1, minScore=floor)
    assert [m.id for m in floored.memories] == [ids["fact"]]
    below = _recall(service, operator, query, limit=3, expand=1, minScore=turn.relevance / 2)
    assert ids["turn"] in [m.id for m in below.memories]


@pytest.mark.parametrize(("count", "listed"), [(6, 4), (12, 10)])
def test_linked_records_come_within_the_answer_limit(
    service: MemoryService, operator: Caller, count: int, listed: int
) -> None:
    """Six records of 875 KB linked to the hit: the four that fit ANSWER_BYTES come, best first; twelve
    small ones (the control): the ten best, as many as a recall lists."""
    ids = _world(service, operator)
    big = {f"p{i}": "7" * 15_900 for i in range(55)} if listed == 4 else {}  # digits: not embedded
    data = [{"n": n, **big} for n in range(count)]
    written = service.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "NOTE", "data": data, "scope": MINE})
    ).records
    for record in written:
        link = {"source": {"id": ids["turn"], "kind": "EPISODE"}, "target": record.id, "type": "HAS", "scope": MINE}
        service.record_writes.link_records(operator, LinkRequest.model_validate(link))
    expanded = _recall(service, operator, "quarterly budget spreadsheet", limit=3, expand=1)
    assert expanded.records is not None and len(expanded.records) == listed
    assert [r.id for r in expanded.records] == [r.id for r in written][:listed]  # equal scores: oldest first


def test_linked_records_of_equal_score_and_time_come_in_the_links_order(
    service: MemoryService, operator: Caller
) -> None:
    ids = _world(service, operator)
    data = [{"n": n} for n in range(12)]
    written = service.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "NOTE", "data": data, "scope": MINE})
    ).records
    for record in reversed(written):  # one write: the same time; linked last first
        link = {"source": {"id": ids["turn"], "kind": "EPISODE"}, "target": record.id, "type": "HAS", "scope": MINE}
        service.record_writes.link_records(operator, LinkRequest.model_validate(link))
    expanded = _recall(service, operator, "quarterly budget spreadsheet", limit=3, expand=1)
    assert expanded.records is not None
    assert [r.id for r in expanded.records] == [r.id for r in reversed(written)][:10]
