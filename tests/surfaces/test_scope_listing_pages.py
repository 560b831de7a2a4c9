"""GET /v1/scopes a page at a time, from what the writes keep (when each scope was last written).

It listed at most 1,000 scopes with no way to the rest (the Mem0-style adapter read at most 1,000
users), and each call grouped every memory of the tenant, also for a key bound to one scope: 1.1 s
a call with 1,000,000 memories over 20,000 scopes (session 45), repeatable by any key. What is
counted here is the statements' SQLite steps, never a time; the old grouping is the positive control.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import pytest

from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.models.scopes import ScopeListQuery
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body, participant, scope_fields
from tests.sqlite_steps import vm_steps

USERS = [f"user{i}" for i in range(7)]


def _write(server: LiveServer, user: str, text: str, turn: int = 0, **scope: Any) -> None:
    fields = scope_fields(participantScopeHash=participant(user), **scope)
    with server.client(server.key(**fields)) as http:
        assert http.post("/v1/episodes", json=episode_body(text, turn=turn)).status_code == 201


def _walk(http: Any, limit: int) -> list[str]:
    hashes: list[str] = []
    params: dict[str, Any] = {"limit": limit}
    for _ in range(100):  # bounded: a cursor that leads back fails, not hangs
        page = http.get("/v1/scopes", params=params).json()
        hashes += [s["participantScopeHash"] for s in page["scopes"]]
        if page["nextCursor"] is None:
            return hashes
        assert len(page["scopes"]) == limit
        params["cursor"] = page["nextCursor"]
    raise AssertionError("no last page after 100")


def test_pages_list_every_scope_once_most_recently_written_first(server: LiveServer) -> None:
    for user in USERS:
        _write(server, user, f"{user} says hello")
    newest_first = [participant(u) for u in reversed(USERS)]
    with server.client(server.key(role="admin")) as http:
        assert _walk(http, 1000) == newest_first  # the positive control: one page holds them all
        assert _walk(http, 3) == newest_first
        assert _walk(http, 7) == newest_first  # exactly one page: no cursor to an empty one
        _write(server, USERS[0], "the first user again", turn=1)  # a write moves its scope to the front
        assert _walk(http, 2) == [participant(USERS[0]), *newest_first[:-1]]
        counts = {s["participantScopeHash"]: s["episodes"] for s in http.get("/v1/scopes").json()["scopes"]}
        assert counts[participant(USERS[0])] == 2 and counts[participant(USERS[1])] == 1


def test_a_key_lists_only_the_scopes_its_grant_names(server: LiveServer) -> None:
    _write(server, "alice", "alice to the coder")
    _write(server, "bob", "bob to the coder")
    _write(server, "carol", "carol to the writer", agentId="writer")
    host = server.key(role="host", agentId="coder", profileId="default")
    with server.client(host) as http:
        assert sorted(_walk(http, 1)) == sorted([participant("alice"), participant("bob")])
    with server.client(server.key(**scope_fields(participantScopeHash=participant("bob")))) as http:
        assert _walk(http, 10) == [participant("bob")]
    with server.client(server.key(role="admin")) as http:  # the positive control: carol's scope is there
        assert participant("carol") in _walk(http, 10)


def test_a_forgotten_participants_scope_is_listed_no_more(server: LiveServer) -> None:
    for user in ("alice", "bob"):
        _write(server, user, f"{user} was here")
    with server.client(server.key(role="admin")) as http:
        assert http.post("/v1/forget", json={"participantScopeHash": participant("alice")}).status_code == 200
        assert _walk(http, 10) == [participant("bob")]  # bob's, the positive control, stays
        _write(server, "alice", "alice again", turn=1)
        assert _walk(http, 10) == [participant("alice"), participant("bob")]


def _cursor(*parts: str) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(parts)).encode()).decode()


KEY, AT = "a" * 64, "2026-01-01T00:00:00.000000Z"
BAD_CURSORS = [
    "not-a-cursor",
    _cursor("facts", "recent", AT, KEY),
    _cursor("scopes", "key", AT, KEY),  # made in the other order
    _cursor("scopes", "recent", "\x00", KEY),  # PostgreSQL's text takes no NUL: it answered 500
    _cursor("scopes", "recent", "\ud800", KEY),  # nor a lone surrogate (SQLite too)
    _cursor("scopes", "recent", AT, "\x00"),
    _cursor("scopes", "recent", AT, "A" * 64),
]


@pytest.mark.parametrize("cursor", BAD_CURSORS)
def test_a_cursor_this_server_did_not_give_names_the_field(server: LiveServer, cursor: str) -> None:
    _write(server, "alice", "hello")
    with server.client(server.key(role="admin")) as http:
        answer = http.get("/v1/scopes", params={"cursor": cursor})
        assert answer.status_code == 422 and answer.json()["field"] == "cursor", answer.text
        assert http.get("/v1/scopes", params={"cursor": _cursor("scopes", "recent", AT, KEY)}).status_code == 200


def test_a_walk_by_key_meets_every_scope_once_while_they_are_written(server: LiveServer) -> None:
    for user in USERS:
        _write(server, user, f"{user} says hello")
    by_hash = {participant(u): u for u in USERS}
    with server.client(server.key(role="admin")) as http:

        def walk(order: str) -> tuple[list[str], str]:
            """The walk, and the scope written after its first page: the one it would list last."""
            whole = http.get("/v1/scopes", params={"order": order}).json()["scopes"]
            last = whole[-1]["participantScopeHash"]
            seen: list[str] = []
            params: dict[str, Any] = {"limit": 2, "order": order}
            while True:
                page = http.get("/v1/scopes", params=params).json()
                if not seen:
                    _write(server, by_hash[last], f"written while the walk by {order} goes on", turn=len(order))
                seen += [s["participantScopeHash"] for s in page["scopes"]]
                if page["nextCursor"] is None:
                    return seen, last
                params["cursor"] = page["nextCursor"]

        by_key, _ = walk("key")
        assert sorted(by_key) == sorted(by_hash) and len(by_key) == len(USERS)  # each once
        recent, written = walk("recent")  # the documented gap of the other order: it moved to the front
        assert written not in recent and sorted([*recent, written]) == sorted(by_hash)


def test_a_scope_emptied_while_its_page_is_read_does_not_end_the_walk(settings: Any) -> None:
    store = SQLiteStore(settings.home)
    service = MemoryService(store, HashingEmbedder(), settings)
    admin = Caller(tenant="t1", key_id="op", role="admin")
    store.tenant("t1", create=True)
    for user in ("a", "b", "c", "d"):
        fields = scope_fields(participantScopeHash=participant(user))
        service.writes.write_episode(admin, EpisodeWrite.model_validate(episode_body(f"{user} here", scope=fields)))
    tenant = store.tenant("t1")
    real = tenant._scope_listing_fetch

    def forgetting(sql: str, params: Sequence[Any]) -> list[Any]:
        rows = real(sql, params)
        if "scope_activity" in sql and len(rows) > 2:  # between the page's two statements, its last goes
            with tenant.transaction() as tx:
                tx._conn.execute("DELETE FROM memories WHERE scope_key = ?", (rows[1][0],))
        return rows

    tenant._scope_listing_fetch = forgetting
    try:
        first = service.admin.list_scopes(admin, ScopeListQuery(limit=2))
        tenant._scope_listing_fetch = real
        rest = service.admin.list_scopes(admin, ScopeListQuery(limit=2, cursor=first.next_cursor))
    finally:
        store.close()
    assert [s.participant_scope_hash for s in first.scopes] == [participant("d")]  # c went before it was counted
    assert first.next_cursor is not None  # the walk goes on past it
    assert [s.participant_scope_hash for s in rest.scopes] == [participant("b"), participant("a")]


OLD_GROUPING = (  # what every listing ran before: every memory of the tenant, grouped
    "SELECT scope_key, count(*), max(recorded_at) FROM memories "
    "GROUP BY scope_key, agent_id, profile_id, privacy_scope, participant_scope_hash, sandbox_eligible "
    "ORDER BY max(recorded_at) DESC, scope_key"
)


def test_a_keys_listing_reads_the_same_however_much_other_scopes_hold(settings: Any) -> None:
    store = SQLiteStore(settings.home)
    service = MemoryService(store, HashingEmbedder(), settings)
    mine = scope_fields(participantScopeHash=participant("bob"))
    bob = Caller(tenant="t1", key_id="k-bob", role="agent", grant=mine)
    other = Caller(tenant="t1", key_id="k-alice", role="agent", grant=scope_fields())
    store.tenant("t1", create=True)
    service.writes.write_episode(bob, EpisodeWrite.model_validate(episode_body("bob", scope=mine)))
    service.writes.write_episode(other, EpisodeWrite.model_validate(episode_body("alice", scope=scope_fields())))
    tenant = store.tenant("t1")
    seen: list[tuple[str, Sequence[Any]]] = []
    real = tenant._db.fetchall

    def recording(sql: str, params: Sequence[Any] = ()) -> list[Any]:
        seen.append((sql, params))
        return real(sql, params)

    def cost() -> tuple[int, int]:
        seen.clear()
        tenant._db.fetchall = recording  # type: ignore[method-assign]
        try:
            listing = service.admin.list_scopes(bob, ScopeListQuery())
        finally:
            del tenant._db.fetchall
        assert [s.participant_scope_hash for s in listing.scopes] == [participant("bob")]
        return vm_steps(tenant.path, seen), vm_steps(tenant.path, [(OLD_GROUPING, [])])

    try:
        before, old_before = cost()
        bodies = [episode_body(f"alice {i}", scope=scope_fields(), turn=i + 1) for i in range(1_000)]
        service.writes.write_episodes(other, [EpisodeWrite.model_validate(b) for b in bodies])
        after, old_after = cost()
    finally:
        store.close()
    assert old_after > old_before + 1_000  # the positive control: the count sees a read of every memory
    assert after == before  # the listing of bob's key reads none of alice's


def test_the_dashboard_opens_a_scope_older_than_those_it_offers(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope written before the newest 1,000 could not be opened (here the page offers two)."""
    from engramdb.api.ui import common

    for user in ("alice", "bob", "carol"):
        _write(server, user, f"{user} says hello")
    with server.client(server.key(role="admin")) as http:
        keys = {s["participantScopeHash"]: s["scopeKey"] for s in http.get("/v1/scopes").json()["scopes"]}
        monkeypatch.setattr(common, "SCOPES_SHOWN", 2)
        offered = http.get("/ui/part/memories")
        assert offered.status_code == 200 and keys[participant("alice")] not in offered.text  # two offered
        opened = http.get("/ui/part/memories", params={"scope": keys[participant("alice")]})
        assert opened.status_code == 200 and "alice says hello" in opened.text
        unknown = http.get("/ui/part/memories", params={"scope": "0" * 64})
        assert unknown.status_code == 404  # the positive control: a key it may not name is still refused


def test_an_older_file_learns_when_its_scopes_were_written(settings: Any) -> None:
    store = SQLiteStore(settings.home)
    service = MemoryService(store, HashingEmbedder(), settings)
    admin = Caller(tenant="t1", key_id="op", role="admin")
    store.tenant("t1", create=True)
    for user in ("alice", "bob"):
        fields = scope_fields(participantScopeHash=participant(user))
        service.writes.write_episode(admin, EpisodeWrite.model_validate(episode_body(f"{user} here", scope=fields)))
    path = store.tenant("t1").path
    listed = service.admin.list_scopes(admin, ScopeListQuery())
    store.close()
    assert [s.participant_scope_hash for s in listed.scopes] == [participant("bob"), participant("alice")]
    with sqlite3.connect(path) as conn:  # what an earlier version's file had: no activity kept
        for trigger in ("memories_scope_activity", "memories_scope_emptied"):
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute("DROP TABLE scope_activity")
        conn.execute("DROP INDEX scopes_by_agent")
    reopened = SQLiteStore(settings.home)
    try:
        again = MemoryService(reopened, HashingEmbedder(), settings).admin.list_scopes(admin, ScopeListQuery())
        assert again == listed
    finally:
        reopened.close()
