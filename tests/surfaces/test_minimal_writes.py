"""Minimal writes and scope without hand-made hashes (issue 20), on both backends.

An episode of two fields and a fact of three (plus the scope the key does not fix) are stored
with their defaults; a ``userId`` write and a ``participantScopeHash`` write of one person land in
one scope; the raw id is in no table and no log line, beside positive controls that show the same
readers do find what is there.
"""

from __future__ import annotations

import logging
import sqlite3

import pytest

from engramdb import clock
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import scope_fields
from tests.stores import as_postgres

RAW_ID = "raw-user-Zq81x@example.org"
HOST = {"agentId": "coder", "profileId": "default"}
REST: dict[str, str | bool] = {"privacyScope": "private", "sandboxEligible": False}


def test_an_episode_of_two_fields_and_a_fact_of_three_are_stored_with_their_defaults(server: LiveServer) -> None:
    before = clock.now_text()
    with server.client(server.key()) as agent:  # an agent key fixes all five scope fields
        episode = agent.post("/v1/episodes", json={"userText": "I moved to Lisbon.", "assistantText": "Noted."})
        fact = agent.post("/v1/facts", json={"text": "The user lives in Lisbon.", "subjectKey": "user", "kind": "city"})
        assert (episode.status_code, fact.status_code) == (201, 201), (episode.text, fact.text)
        stored = agent.get(f"/v1/episodes/{episode.json()['id']}").json()["event"]
        learned = agent.get(f"/v1/facts/{fact.json()['id']}").json()["event"]
    after = clock.now_text()
    assert {
        k: stored[k]
        for k in (
            "runtime",
            "externalSessionId",
            "turnIndex",
            "summary",
            "conversationKind",
            "visibility",
            "trustClass",
            "originClass",
            "provenance",
        )
    } == {
        "runtime": "custom",
        "externalSessionId": "default",
        "turnIndex": 0,
        "summary": "I moved to Lisbon.",
        "conversationKind": "direct",
        "visibility": "participant",
        "trustClass": "mixed",
        "originClass": "conversation",
        "provenance": "api",
    }
    assert {
        k: learned[k]
        for k in ("runtime", "confidence", "sourceEventId", "visibility", "trustClass", "provenance", "active")
    } == {
        "runtime": "custom",
        "confidence": 1.0,
        "sourceEventId": "api",
        "visibility": "participant",
        "trustClass": "trusted",
        "provenance": "api",
        "active": True,
    }
    for stamped in (stored["observedAt"], learned["validFrom"]):  # "now": between the two readings around it
        assert clock.parse(before) <= clock.parse(stamped) <= clock.parse(after)
    assert stored["participantScopeHash"] == learned["participantScopeHash"] == scope_fields()["participantScopeHash"]


def test_a_shared_scope_gets_shared_visibility_and_an_empty_turn_is_still_refused(server: LiveServer) -> None:
    with server.client(server.key(role="host", **HOST)) as host:
        shared = host.post(
            "/v1/facts",
            json={
                "text": "The team uses Go.",
                "subjectKey": "team",
                "kind": "language",
                "userId": "team-1",
                "privacyScope": "shared",
                "sandboxEligible": False,
            },
        )
        assert shared.status_code == 201 and shared.json()["memory"]["event"]["visibility"] == "shared"
        empty = host.post("/v1/episodes", json={"userText": " ", "assistantText": "", "userId": "u1", **REST})
        assert empty.status_code == 422 and empty.json()["field"] == "summary"
        scopeless = host.post("/v1/facts", json={"text": "x", "subjectKey": "user", "kind": "k"})
        assert scopeless.status_code == 422 and scopeless.json()["field"] == "privacyScope"


def test_a_user_id_write_and_a_hash_write_of_one_person_land_in_one_scope(server: LiveServer) -> None:
    with server.client(server.key(role="host", **HOST)) as host:
        by_id = host.post(
            "/v1/facts", json={"text": "Prefers tea.", "subjectKey": "user", "kind": "drink", "userId": "alice", **REST}
        )
        assert by_id.status_code == 201, by_id.text
        resolved = host.post("/v1/scope/resolve", json={"userId": "alice", **REST}).json()
        assert resolved["complete"] and resolved["scope"]["participantScopeHash"] == resolved["participantScopeHash"]
        alice = resolved["participantScopeHash"]
        assert by_id.json()["memory"]["event"]["participantScopeHash"] == alice
        by_hash = host.post(
            "/v1/episodes",
            json={"userText": "Tea, always tea.", "assistantText": "Noted.", "participantScopeHash": alice, **REST},
        )
        assert by_hash.status_code == 201
        listed = host.get("/v1/facts", params={"participantScopeHash": alice, **REST}).json()["facts"]
        by_url = host.get("/v1/facts", params={"userId": "alice", **REST})  # a URL is logged: refused, said why
        assert by_url.status_code == 422 and by_url.json()["field"] == "userId" and "alice" not in by_url.text
        assert [f["id"] for f in listed] == [by_id.json()["id"]]
        recalled = host.post("/v1/recall", json={"query": "tea", "scope": {"userId": "alice", **REST}}).json()
        assert {m["id"] for m in recalled["memories"]} == {by_id.json()["id"], by_hash.json()["id"]}
        # Another person's id is another scope: nothing of alice's (beside the positive control above).
        bob = host.post("/v1/recall", json={"query": "tea", "scope": {"userId": "bob", **REST}}).json()
        assert bob["memories"] == []
        twice = host.post(
            "/v1/facts",
            json={
                "text": "x",
                "subjectKey": "u",
                "kind": "k",
                "userId": "alice",
                "participantScopeHash": alice,
                **REST,
            },
        )
        assert twice.status_code == 422 and twice.json()["field"] == "userId"
    with server.client(server.key(role="agent", **scope_fields(participantScopeHash=alice))) as agent:
        assert agent.post("/v1/scope/resolve", json={"userId": "alice"}).json()["complete"]
        other = agent.post("/v1/facts", json={"text": "x", "subjectKey": "u", "kind": "k", "userId": "bob"})
        assert other.status_code == 403 and other.json()["field"] == "participantScopeHash"


def _table_text(server: LiveServer) -> str:
    """Every value of every table of the tenant, as text."""
    if isinstance(server.store, SQLiteStore):
        conn = sqlite3.connect(server.store.home / "tenants" / "t1.sqlite3")
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = [row for table in tables for row in conn.execute(f'SELECT * FROM "{table}"')]
        conn.close()
    else:
        import psycopg

        store = as_postgres(server.store)
        with psycopg.connect(store.url) as pg_conn:
            tables = [
                r[0]
                for r in pg_conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (store.schema,)
                )
            ]
            rows = [row for t in tables for row in pg_conn.execute(f'SELECT * FROM "{store.schema}"."{t}"')]
    assert len(tables) >= 4  # the walk found the tables
    return "\n".join(repr(value) for row in rows for value in row)


def test_the_raw_id_is_in_no_table_and_no_log_line(server: LiveServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="uvicorn.access")  # the request lines, as `engram serve` logs them
    caplog.set_level(logging.DEBUG)  # (after: set_level also sets the capturing handler's level)
    marker = "Quokka-7731 likes oolong"
    with server.client(server.key(role="host", **HOST)) as host:
        writes = [
            host.post("/v1/episodes", json={"userText": marker, "assistantText": "ok", "userId": RAW_ID, **REST}),
            host.post(
                "/v1/facts", json={"text": marker, "subjectKey": "user", "kind": "tea", "userId": RAW_ID, **REST}
            ),
            host.post(
                "/v1/episodes/batch",
                json={"episodes": [{"userText": "second", "assistantText": "ok"}], "scope": {"userId": RAW_ID, **REST}},
            ),
            host.post("/v1/recall", json={"query": "oolong", "scope": {"userId": RAW_ID, **REST}}),
            host.post("/v1/scope/resolve", json={"userId": RAW_ID, **REST}),
        ]
        assert [w.status_code for w in writes] == [201, 201, 200, 200, 200]
        assert writes[3].json()["memories"]  # the recall by userId found them
        refused = host.post("/v1/facts", json={"text": "x", "subjectKey": "u", "userId": RAW_ID, **REST})
        assert refused.status_code == 422 and RAW_ID not in refused.text  # a refusal does not echo it
    hashed = writes[4].json()["participantScopeHash"]
    logging.getLogger("engramdb.test").debug("control %s", marker)
    lines = [record.getMessage() for record in caplog.records]
    # Positive controls: the request lines and our own DEBUG line are captured, the tables hold the
    # memory's text and its hash, so the readers would see the raw id if it were there.
    assert any("/v1/episodes" in line for line in lines) and any(marker in line for line in lines)
    tables = _table_text(server)
    assert marker in tables and hashed in tables
    assert not [line for line in lines if RAW_ID in line]
    assert RAW_ID not in tables and RAW_ID.lower() not in tables.lower()
