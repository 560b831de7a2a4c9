"""The change feed (``GET /v1/changes``) on both backends: every kind of change, in order, from a
cursor; ids, kinds, times and scopes, never text; a key sees the scopes it may name, also once
they are erased; the cursor passes what it may not see."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.auth import Caller
from engramdb.core.changes.kinds import ACTION_KINDS
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.errors import NotFoundError
from engramdb.models.admin import AuditQuery
from engramdb.models.changes import Change, ChangeQuery
from engramdb.models.erasure import DeleteMemoryQuery, ForgetRequest
from engramdb.models.knowledge import DeleteQuery, LinkRequest, RecordChange, RecordWrite, UnlinkRequest
from engramdb.models.lifecycle import RejectDecision, RetractRequest, ReviewDecision
from engramdb.models.memories import MemoryQuery, WriteOptions
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body, participant, scope_fields

ALICE = scope_fields()
BOB = scope_fields(participantScopeHash=participant("bob"))
OTHER_AGENT = scope_fields(agentId="planner")


def feed(service: MemoryService, caller: Caller, *, limit: int = 1000, **query: Any) -> list[Change]:
    """The whole feed a caller may read, page by page."""
    changes, after = [], 0
    while True:
        page = service.changes.list_changes(
            caller, ChangeQuery.model_validate({"after": after, "limit": limit, **query})
        )
        changes += page.changes
        assert page.next_after >= after and page.next_after <= page.head
        after = page.next_after
        if not page.more:
            return changes


def _episode(service: MemoryService, caller: Caller, text: str, scope: dict[str, Any], turn: int = 0) -> str:
    body = episode_body(text, "Noted.", session="s", turn=turn, scope=scope)
    return service.writes.write_episode(caller, EpisodeWrite.model_validate(body)).id


def _fact(
    service: MemoryService, caller: Caller, text: str, scope: dict[str, Any], *, derived: bool = False, **extra: Any
) -> str:
    body = fact_body(text, kind="editor", scope=scope, **extra)
    origin = WriteOptions.model_validate({"origin": "derived"}) if derived else None
    return service.writes.write_fact(caller, FactWrite.model_validate(body), origin).id


def _knowledge(service: MemoryService, caller: Caller) -> None:
    """A record written, updated, linked, unlinked and deleted."""
    written = service.record_writes.write_records(
        caller, RecordWrite.model_validate({"label": "TASK", "data": [{"title": "a"}, {"title": "b"}], "scope": ALICE})
    )
    a, b = (r.id for r in written.records)
    change = {"properties": {"status": "done"}, "scope": ALICE}
    service.record_writes.update_record(caller, a, RecordChange.model_validate(change))
    link = {"source": a, "target": b, "type": "DEPENDS_ON", "scope": ALICE}
    service.record_writes.link_records(caller, LinkRequest.model_validate(link))
    service.record_writes.unlink_records(caller, UnlinkRequest.model_validate(link))
    service.record_deletes.delete_record(caller, b, DeleteQuery.model_validate(ALICE))


def test_each_step_of_a_memorys_life_is_one_change_of_its_kind_in_order(
    service: MemoryService, operator: Caller
) -> None:
    episode = _episode(service, operator, "I moved to Lisbon.", ALICE)
    first = _fact(service, operator, "Uses vim", ALICE)
    second = _fact(service, operator, "Uses emacs", ALICE, validFrom="2026-09-01T00:00:00Z")
    service.writes.retract_fact(operator, second, RetractRequest.model_validate({"reason": "wrong", "scope": ALICE}))
    parked = _fact(service, operator, "Uses helix", ALICE, derived=True, validFrom="2026-10-01T00:00:00Z")
    service.review.approve(operator, parked, ReviewDecision.model_validate({"scope": ALICE}))
    refused = _fact(service, operator, "Uses nano", ALICE, derived=True, validFrom="2026-11-01T00:00:00Z")
    service.review.reject(operator, refused, RejectDecision.model_validate({"reason": "no", "scope": ALICE}))
    _knowledge(service, operator)
    service.erasure.delete_episode(operator, episode, DeleteMemoryQuery.model_validate(ALICE))
    changes = feed(service, operator, limit=3)
    seen = [(c.kind, c.target, c.id) for c in changes]
    assert seen[:4] == [
        ("created", "episode", episode),
        ("created", "fact", first),
        ("created", "fact", second),
        ("superseded", "fact", first),
    ]
    assert ("retracted", "fact", second) in seen and ("created", "fact", parked) in seen
    assert seen.count(("reviewed", "fact", parked)) == 1 and seen.count(("reviewed", "fact", refused)) == 1
    kinds = [(c.kind, c.target) for c in changes]
    for step in [("created", "record"), ("updated", "record"), ("created", "relationship")]:
        assert step in kinds
    assert ("deleted", "relationship") in kinds and ("deleted", "record") in kinds
    assert seen[-1] == ("deleted", "episode", episode)
    assert [c.seq for c in changes] == sorted({c.seq for c in changes})  # in order, each once
    # Exactly the audit entries of the feed's actions, and nothing else of the log (keys, tombstones).
    log = service.admin.audit(operator, AuditQuery(limit=1000)).entries
    assert [(e.seq, e.action) for e in log if e.action in ACTION_KINDS] == [(c.seq, c.action) for c in changes]
    assert {e.action for e in log} - set(ACTION_KINDS) >= {"tombstone.create"}  # positive control: left out
    assert all(c.scope_key is not None and c.scope is not None and c.scope.agent_id == "coder" for c in changes)


def test_the_feed_holds_no_text_and_an_erased_memory_leaves_only_its_ids(
    service: MemoryService, operator: Caller
) -> None:
    episode = _episode(service, operator, "My locker code is marker-quokka-417.", ALICE)
    fact = _fact(service, operator, "Lives at marker-wombat-233", ALICE)
    service.writes.retract_fact(
        operator, fact, RetractRequest.model_validate({"reason": "marker-numbat-989 said so", "scope": ALICE})
    )
    _episode(service, operator, "Bob's own turn, marker-kept-555.", BOB)
    reasons = [e.reason or "" for e in service.admin.audit(operator, AuditQuery(limit=1000)).entries]
    assert any("marker-numbat-989" in r for r in reasons)  # positive control: the log holds the reason
    before = json.dumps([c.wire() for c in feed(service, operator)])
    assert episode in before and fact in before  # positive control: the ids are there
    assert not any(m in before for m in ("marker-quokka", "marker-wombat", "marker-numbat", "marker-kept"))
    service.erasure.forget_participant(
        operator, ForgetRequest.model_validate({"participantScopeHash": ALICE["participantScopeHash"]})
    )
    with pytest.raises(NotFoundError):
        service.reads.get_episode(operator, episode, MemoryQuery.model_validate(ALICE))
    after = feed(service, operator)
    alice_key = next(c.scope_key for c in after if c.id == episode)
    assert [(c.kind, c.target, c.id) for c in after if c.scope_key == alice_key][-1] == (
        "forgotten",
        "scope",
        alice_key,
    )
    assert {c.id for c in after} >= {episode, fact}  # what happened stays, as ids
    text = json.dumps([c.wire() for c in after])
    assert not any(m in text for m in ("marker-quokka", "marker-wombat", "marker-numbat", "marker-kept"))


def test_a_cursor_reads_each_change_once_in_order_and_kinds_narrow_it(service: MemoryService, operator: Caller) -> None:
    ids = [_episode(service, operator, f"Turn number {i} about the billing service.", ALICE, turn=i) for i in range(25)]
    service.erasure.delete_episode(operator, ids[3], DeleteMemoryQuery.model_validate(ALICE))
    whole = feed(service, operator)
    assert [c.id for c in feed(service, operator, limit=7)] == [c.id for c in whole] == [*ids, ids[3]]
    head = service.changes.list_changes(operator, ChangeQuery(limit=1000))
    assert (head.next_after, head.more) == (head.head, False)
    again = service.changes.list_changes(operator, ChangeQuery(after=head.next_after))
    assert (again.changes, again.next_after, again.more) == ([], head.head, False)
    deleted = feed(service, operator, kinds="deleted")
    assert [(c.kind, c.id) for c in deleted] == [("deleted", ids[3])]
    with pytest.raises(ValueError):
        ChangeQuery.model_validate({"kinds": "created,exploded"})


def test_a_key_sees_the_scopes_it_may_name_also_after_they_are_erased(service: MemoryService, operator: Caller) -> None:
    mine, theirs = _episode(service, operator, "Alice's turn.", ALICE), _episode(service, operator, "Bob's.", BOB)
    planner = _episode(service, operator, "Another agent's turn.", OTHER_AGENT)
    host = Caller("t1", "host-key", "host", grant={"agentId": "coder", "profileId": "default"})
    agent = Caller("t1", "agent-key", "agent", grant=BOB)
    assert {c.id for c in feed(service, host)} == {mine, theirs}
    assert [c.id for c in feed(service, agent)] == [theirs]
    assert {c.id for c in feed(service, operator)} == {mine, theirs, planner}  # positive control: all three
    service.erasure.forget_participant(
        operator, ForgetRequest.model_validate({"participantScopeHash": BOB["participantScopeHash"]})
    )
    assert [c.kind for c in feed(service, agent)] == ["created", "forgotten"]
    host_sees = feed(service, host)
    assert [c.kind for c in host_sees if c.id == theirs or c.target == "scope"] == ["created", "forgotten"]
    assert planner not in {c.id for c in host_sees}


def test_the_cursor_passes_what_the_key_may_not_see(service: MemoryService, operator: Caller) -> None:
    for i in range(12):
        _episode(service, operator, f"Bob's turn {i}.", BOB, turn=i)
    alice = Caller("t1", "agent-key", "agent", grant=ALICE)
    page = service.changes.list_changes(alice, ChangeQuery())
    assert (page.changes, page.next_after, page.more) == ([], page.head, False) and page.head >= 12
    mine = _episode(service, operator, "Alice at last.", ALICE)
    later = service.changes.list_changes(alice, ChangeQuery(after=page.next_after))
    assert [c.id for c in later.changes] == [mine]


def test_a_file_from_before_the_feed_names_its_scopes_when_opened(settings: Settings) -> None:
    store = SQLiteStore(settings.home)
    service = MemoryService(store, HashingEmbedder(), settings)
    store.tenant("t1", create=True)
    operator = Caller("t1", "op", "admin")
    mine = _episode(service, operator, "Written before the feed.", ALICE)
    path = store.tenant("t1").path
    store.close()
    with sqlite3.connect(path) as conn:  # as a file of the release before this one
        for name in ("memories_name_scope", "records_name_scope"):
            conn.execute(f"DROP TRIGGER {name}")
        for table in ("scopes", "webhooks", "webhook_deliveries"):
            conn.execute(f"DROP TABLE {table}")
    reopened = MemoryService(SQLiteStore(settings.home), HashingEmbedder(), settings)
    host = Caller("t1", "host-key", "host", grant={"agentId": "coder", "profileId": "default"})
    assert [c.id for c in feed(reopened, host)] == [mine]
    later = _episode(reopened, operator, "Written after.", ALICE, turn=1)
    assert [c.id for c in feed(reopened, host)] == [mine, later]


def test_the_feed_over_rest_answers_each_key_its_own(server: LiveServer) -> None:
    admin, bob = server.key(role="admin"), server.key(**BOB)
    with server.client(admin) as http:
        assert http.post("/v1/episodes", json=episode_body("Alice's turn.", scope=ALICE)).status_code == 201
        assert http.post("/v1/episodes", json=episode_body("Bob's turn.", scope=BOB)).status_code == 201
        everything = http.get("/v1/changes").json()
        assert http.get("/v1/changes", params={"kinds": "created,nonsense"}).status_code == 422
    with server.client(bob) as http:
        own = http.get("/v1/changes", params={"after": 0, "limit": 10}).json()
    assert len(everything["changes"]) == 2 and everything["nextAfter"] == everything["head"]
    assert [c["scope"]["participantScopeHash"] for c in own["changes"]] == [BOB["participantScopeHash"]]
    assert set(own["changes"][0]) <= {"seq", "kind", "target", "id", "action", "at", "scopeKey", "scope", "actorRole"}
