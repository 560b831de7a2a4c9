"""Entity links without a model: the extractor, the ENTITY records and MENTIONS relationships a write
makes, and recall's hop through them (a question about A finds the memory about B that shares A's
entity); on both backends, through the production service (issue 33)."""

from __future__ import annotations

import datetime as dt

from engramdb import clock
from engramdb.config import RetrievalSettings, Settings
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.entities import entity_key, extract
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.knowledge import RecordSearch, RelationshipQuery
from engramdb.models.recall import RecallRequest, RecallResponse
from engramdb.storage.port import Store
from tests.factories import episode_body, scope_fields

SCOPE = scope_fields()
FILLER = [
    "The dentist moved my appointment to next week",
    "I finished reading a novel about lighthouses",
    "The car needs new winter tyres soon",
    "We painted the fence a dark green colour",
    "The team meeting was moved to the afternoon",
    "I started learning to play the cello",
    "Our neighbours are building a greenhouse",
    "The library closes early on public holidays",
    "I booked a table for dinner on the terrace",
    "My running shoes are finally worn out",
    "The printer ran out of cyan ink again",
    "We adopted a rescue dog from the shelter",
]


def test_the_extractor_finds_names_products_places_and_identifiers() -> None:
    found = extract(
        "My sister works at Acme Corp in New York. I use PostgreSQL and an iPhone; see JIRA-123, PR #12 and "
        'Flask-Login v0.6.2 for "Project Falcon". Can you help?\n```python\nclass Secret: pass\n```'
    )
    assert {"acme corp", "new york", "postgresql", "iphone", "jira-123", "#12", "flask-login", "v0.6.2"} <= set(found)
    assert "project falcon" in found and found["acme corp"] == "Acme Corp"
    assert not {"my", "can", "i", "secret", "class"} & set(found)  # function words and code are no names
    # A capitalised word that only starts a sentence is a verb or a filler, unless written so elsewhere.
    assert "configure" not in extract("Configure the server first.")
    assert "berlin" in extract("Berlin is lovely. We moved to Berlin in May.")
    assert entity_key("  ACME   Corp ") == "acme corp"


def _service(store: Store, settings: Settings, **retrieval: object) -> MemoryService:
    tuned = settings.model_copy(  # the links and their lift on (both off by default)
        update={
            "retrieval": RetrievalSettings.model_validate({"entity_links": True, "entity_weight": 0.3, **retrieval})
        }
    )
    return MemoryService(store, HashingEmbedder(), tuned)


def _seed(service: MemoryService, caller: Caller, store: Store) -> tuple[str, str]:
    start = clock.utc_now() - dt.timedelta(days=40)
    texts = [
        "My sister finally moved in with her partner, she told me about Quillmoor Harbour",
        *FILLER,
        "Quillmoor Harbour has the oldest lighthouse ferry on the coast, with a fish market",
    ]
    ids = []
    for i, text in enumerate(texts):
        at = clock.to_text(start + dt.timedelta(days=i))
        body = episode_body(text, "", session=f"s{i}", turn=0, scope=SCOPE, observedAt=at)
        ids.append(service.writes.write_episode(caller, EpisodeWrite.model_validate(body)).id)
    drain(store.tenant("t1"), service.shared.embedder)
    return ids[0], ids[-1]


def _ask(service: MemoryService, caller: Caller, query: str) -> RecallResponse:
    body = {"query": query, "scope": SCOPE, "limit": 3, "explain": True}
    return service.reads.recall(caller, RecallRequest.model_validate(body))


def test_a_write_links_its_episode_to_entity_records(store: Store, settings: Settings, operator: Caller) -> None:
    service = _service(store, settings)
    first, last = _seed(service, operator, store)
    entities = service.record_reads.search_records(
        operator, RecordSearch.model_validate({"labels": ["ENTITY"], "scope": SCOPE, "limit": 1000})
    )
    harbour = [r for r in entities.records if r.properties["key"] == "quillmoor harbour"]
    assert len(harbour) == 1 and harbour[0].properties["name"] == "Quillmoor Harbour" and harbour[0].origin == "derived"
    for episode in (first, last):  # both memories mention the one record
        links = service.record_reads.list_relationships(
            operator, RelationshipQuery.model_validate({"id": episode, "kind": "EPISODE", "type": "MENTIONS", **SCOPE})
        )
        assert harbour[0].id in {r.target.id for r in links.relationships}
    off = _service(store, settings, entity_links=False)
    body = episode_body("We met Zanthor Veil at the station", "", session="x", scope=SCOPE)
    written = off.writes.write_episode(operator, EpisodeWrite.model_validate(body))
    unlinked = off.record_reads.list_relationships(
        operator, RelationshipQuery.model_validate({"id": written.id, "kind": "EPISODE", **SCOPE})
    )
    assert unlinked.relationships == []  # the setting turns the write side off


def test_a_question_about_a_finds_the_memory_about_b_through_their_entity(
    store: Store, settings: Settings, operator: Caller
) -> None:
    sister, harbour = _seed(_service(store, settings), operator, store)
    question = "Where did my sister move with her partner?"

    control = _ask(_service(store, settings, entity_weight=0.0), operator, question)
    assert control.memories[0].id == sister  # found by its words
    assert harbour not in [m.id for m in control.memories]  # the other memory shares none of them

    answer = _ask(_service(store, settings), operator, question)
    ranked = [m.id for m in answer.memories]
    assert ranked[0] == sister and harbour in ranked
    linked = next(m for m in answer.memories if m.id == harbour)
    assert linked.explain is not None and linked.explain.features["entities"] > 0


def test_the_links_a_write_makes_are_held_by_the_audit(store: Store, settings: Settings, operator: Caller) -> None:
    from tests.surfaces.test_audit_tamper import _memory_edit

    service = _service(store, settings)
    _seed(service, operator, store)
    verdict = service.admin.verify_audit(operator)
    assert verdict.verified and (verdict.rows_checked or 0) > 14, verdict  # every ENTITY and MENTIONS row held
    _memory_edit(store, "UPDATE relationships SET properties_json = '{\"forged\": true}' WHERE type = 'MENTIONS'")
    forged = service.admin.verify_audit(operator)
    assert not forged.verified and forged.row_kind == "RELATIONSHIP", forged  # an edited link is named


def test_a_memory_found_only_through_an_entity_passes_the_relevance_floor_too(
    store: Store, settings: Settings, operator: Caller
) -> None:
    service = _service(store, settings, candidate_pool=2)  # the arms see too few rows to find the harbour
    sister, harbour = _seed(service, operator, store)
    question = "Where did my sister move with her partner?"
    control = _ask(_service(store, settings, candidate_pool=2, entity_weight=0.0), operator, question)
    assert harbour not in [m.id for m in control.memories]  # neither arm finds it
    joined = _ask(service, operator, question)
    assert harbour in [m.id for m in joined.memories]  # found through the sister's entity alone
    body = {"query": question, "scope": SCOPE, "limit": 3, "minScore": 0.3}
    floored = service.reads.recall(operator, RecallRequest.model_validate(body)).memories
    assert [m.id for m in floored][:1] == [sister] and all(m.relevance >= 0.3 for m in floored)
    assert harbour not in [m.id for m in floored]  # it shares none of the question's words


def test_under_a_relevance_floor_a_memory_that_passes_it_is_still_lifted_by_its_entity(
    store: Store, settings: Settings, operator: Caller
) -> None:
    sister, harbour = _seed(_service(store, settings), operator, store)
    # The harbour memory shares "lighthouse" with the question: it passes the floor on its own words.
    body = {"query": "Where did my sister move, near the lighthouse?", "scope": SCOPE, "limit": 5, "explain": True}
    floored = {**body, "minScore": 0.05}

    def entities(service: MemoryService, request: dict[str, object]) -> dict[str, float]:
        memories = service.reads.recall(operator, RecallRequest.model_validate(request)).memories
        return {m.id: m.explain.features.get("entities", 0.0) for m in memories if m.explain is not None}

    unlifted = entities(_service(store, settings, entity_weight=0.0), floored)
    assert sister in unlifted and harbour in unlifted and unlifted[harbour] == 0  # control: kept, not lifted
    lifted = entities(_service(store, settings), floored)
    assert sister in lifted and lifted[harbour] > 0  # the sister's entity lifts it under the floor too
    assert lifted[harbour] == entities(_service(store, settings), body)[harbour]  # as much as without a floor
