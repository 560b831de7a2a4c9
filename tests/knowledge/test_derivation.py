"""A fact's sourceEventId is a real DERIVED_FROM link to its episode, on both backends, whichever
of the two arrives first, and never to another scope's episode with the same eventId."""

from __future__ import annotations

import sqlite3
from typing import Any

from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.models.knowledge import RelationshipQuery
from engramdb.storage.port import Store
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import episode_body, fact_body, participant, scope_fields
from tests.stores import as_postgres, open_store, store_spec

MINE = scope_fields()
THEIRS = scope_fields(participantScopeHash=participant("bob"))


def _episode(service: MemoryService, caller: Caller, scope: dict[str, Any], **extra: Any) -> str:
    body = episode_body("We moved staging to Frankfurt", scope=scope, **extra)
    return service.writes.write_episode(caller, EpisodeWrite.model_validate(body)).id


def _fact(service: MemoryService, caller: Caller, text: str, source: str, scope: dict[str, Any] = MINE) -> str:
    body = fact_body(text, kind=text.split()[0].lower(), sourceEventId=source, scope=scope)
    return service.writes.write_fact(caller, FactWrite.model_validate(body)).id


def _links(service: MemoryService, caller: Caller, kind: str, node: str, scope: dict[str, Any] = MINE) -> list[Any]:
    """The node's DERIVED_FROM links (the write path's MENTIONS links to entities are not these tests')."""
    query = RelationshipQuery.model_validate({"id": node, "kind": kind, "type": "DERIVED_FROM", **scope})
    return [
        (r.type, r.source.kind, r.source.id, r.target.kind, r.target.id)
        for r in service.record_reads.list_relationships(caller, query).relationships
    ]


def test_a_fact_links_to_the_episode_it_names(service: MemoryService, operator: Caller) -> None:
    event = _episode(service, operator, MINE)
    fact = _fact(service, operator, "Staging is in Frankfurt", event)
    assert _links(service, operator, "MEMORY_FACT", fact) == [("DERIVED_FROM", "MEMORY_FACT", fact, "EPISODE", event)]
    assert _links(service, operator, "EPISODE", event) == _links(service, operator, "MEMORY_FACT", fact)
    unrelated = _fact(service, operator, "Deploys happen on Tuesdays", "some-other-turn")
    assert _links(service, operator, "MEMORY_FACT", unrelated) == []  # the first fact's link is the control


def test_an_episode_arriving_after_its_facts_picks_them_up(service: MemoryService, operator: Caller) -> None:
    # The fact names the host's turn id; the episode of that turn, written later, carries it too.
    fact = _fact(service, operator, "Staging is in Frankfurt", "turn-9")
    assert _links(service, operator, "MEMORY_FACT", fact) == []
    event = _episode(service, operator, MINE, sourceEventId="turn-9")
    assert _links(service, operator, "MEMORY_FACT", fact) == [("DERIVED_FROM", "MEMORY_FACT", fact, "EPISODE", event)]


def test_a_fact_arriving_after_its_episode_finds_it_by_the_hosts_turn_id(
    service: MemoryService, operator: Caller
) -> None:
    event = _episode(service, operator, MINE, sourceEventId="turn-7")
    fact = _fact(service, operator, "Staging is in Frankfurt", "turn-7")
    assert _links(service, operator, "MEMORY_FACT", fact) == [("DERIVED_FROM", "MEMORY_FACT", fact, "EPISODE", event)]
    other = _fact(service, operator, "Deploys happen on Tuesdays", "turn-8")
    assert _links(service, operator, "MEMORY_FACT", other) == []  # no episode of that turn: the control


def test_never_to_another_scopes_episode_with_the_same_id(service: MemoryService, operator: Caller) -> None:
    # eventIds do not cover participantScopeHash: bob's identical turn has alice's eventId.
    event = _episode(service, operator, THEIRS)
    assert _episode(service, operator, MINE) == event
    theirs = _fact(service, operator, "Staging is in Frankfurt", event, scope=THEIRS)
    mine = _fact(service, operator, "Staging is in Frankfurt", event)
    for fact, scope in ((mine, MINE), (theirs, THEIRS)):
        links = _links(service, operator, "MEMORY_FACT", fact, scope)
        assert links == [("DERIVED_FROM", "MEMORY_FACT", fact, "EPISODE", event)]
    # Each episode has exactly its own scope's fact (the ids are equal; the rows are not).
    assert len(_links(service, operator, "EPISODE", event, MINE)) == 1
    assert len(_links(service, operator, "EPISODE", event, THEIRS)) == 1


def test_a_correction_names_its_own_source(service: MemoryService, operator: Caller) -> None:
    from engramdb.models.lifecycle import CorrectRequest

    event = _episode(service, operator, MINE)
    fact = _fact(service, operator, "Staging is in Frankfurt", event)
    later = _episode(service, operator, MINE, turn=2, userText="Staging moved to Dublin", summary="Staging: Dublin")
    body = CorrectRequest.model_validate(
        {"text": "Staging is in Dublin", "reason": "moved", "sourceEventId": later, "scope": MINE}
    )
    corrected = service.writes.correct_fact(operator, fact, body).id
    assert _links(service, operator, "MEMORY_FACT", corrected) == [
        ("DERIVED_FROM", "MEMORY_FACT", corrected, "EPISODE", later)
    ]
    assert _links(service, operator, "MEMORY_FACT", fact)[0][4] == event  # the old one keeps its own


def _forget_source_events(store: Store) -> None:
    """Make the store look like one from before the links (migration 007 / the SQLite upgrade)."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.tenant("t1").path) as conn:
            conn.execute("DROP INDEX memories_by_source_event")
            conn.execute("DROP INDEX memories_current_facts")  # a later index, over the column
            conn.execute("ALTER TABLE memories DROP COLUMN source_event_id")
            conn.execute("DELETE FROM relationships")
        return
    import psycopg

    pg = as_postgres(store)
    schema = pg.schema
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {schema}.memories DROP COLUMN source_event_id")
        conn.execute(f"DELETE FROM {schema}.relationships")
        conn.execute(f"DELETE FROM {schema}.schema_migrations WHERE name = '007_source_events.sql'")


def test_a_store_from_before_the_links_gets_them(service: MemoryService, operator: Caller) -> None:
    event = _episode(service, operator, MINE)
    fact = _fact(service, operator, "Staging is in Frankfurt", event)
    other = _fact(service, operator, "Deploys happen on Tuesdays", "no-such-turn")
    spec = store_spec(service.shared.store)
    _forget_source_events(service.shared.store)
    assert _links(service, operator, "MEMORY_FACT", fact) == []  # gone, as before the upgrade
    service.shared.store.close()
    reopened = MemoryService(open_store(spec), HashingEmbedder(), service.shared.settings)
    try:
        assert _links(reopened, operator, "MEMORY_FACT", fact) == [
            ("DERIVED_FROM", "MEMORY_FACT", fact, "EPISODE", event)
        ]
        assert _links(reopened, operator, "MEMORY_FACT", other) == []
    finally:
        reopened.shared.store.close()
