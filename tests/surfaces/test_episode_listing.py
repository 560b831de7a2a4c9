"""GET /v1/episodes: a scope's episodes newest first, exact, a page at a time (REST and SDK)."""

from __future__ import annotations

from typing import Any

from engramdb.errors import InvalidInputError
from engramdb.sdk import Client
from tests.conftest import LiveServer
from tests.factories import episode_body, participant, scope_fields


def _stamp(i: int) -> str:
    return f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"


def _write(server: LiveServer, key: str, count: int) -> list[dict[str, Any]]:
    with server.client(key) as http:
        bodies = [episode_body(f"turn {i}", session=f"s{i % 3}", turn=i, observedAt=_stamp(i)) for i in range(count)]
        # Written out of time order: listing order is observedAt, not write order.
        for start in (40, 0, 80):
            chunk = bodies[start : start + 40]
            if not chunk:
                continue
            answer = http.post("/v1/episodes/batch", json={"episodes": chunk})
            assert {r["status"] for r in answer.json()["results"]} == {201}
        return bodies


def test_paging_walks_every_episode_once_newest_first(server: LiveServer) -> None:
    key = server.key()
    _write(server, key, 120)
    seen: list[str] = []
    with server.client(key) as http:
        params: dict[str, Any] = {"limit": 25}
        while True:
            page = http.get("/v1/episodes", params=params).json()
            seen += [e["event"]["userText"] for e in page["episodes"]]
            if page["nextCursor"] is None:
                break
            params["cursor"] = page["nextCursor"]
    assert seen == [f"turn {i}" for i in reversed(range(120))]


def test_filters_and_a_foreign_cursor(server: LiveServer) -> None:
    key = server.key()
    _write(server, key, 60)
    bob = server.key(**scope_fields(participantScopeHash=participant("bob")))
    with server.client(bob) as http:
        http.post("/v1/episodes", json=episode_body("bob's turn", session="s1"))
        assert [e["event"]["userText"] for e in http.get("/v1/episodes").json()["episodes"]] == ["bob's turn"]
    with server.client(key) as http:
        session = http.get("/v1/episodes", params={"sessionId": "s1", "limit": 1000}).json()["episodes"]
        assert [e["event"]["userText"] for e in session] == [f"turn {i}" for i in reversed(range(1, 60, 3))]
        window = http.get("/v1/episodes", params={"after": _stamp(10), "before": _stamp(13)}).json()["episodes"]
        assert [e["event"]["userText"] for e in window] == ["turn 12", "turn 11", "turn 10"]
        everything = http.get("/v1/episodes", params={"limit": 1000}).json()["episodes"]
        assert len(everything) == 60 and "bob's turn" not in {e["event"]["userText"] for e in everything}
        refused = http.get("/v1/episodes", params={"cursor": "not-a-cursor"})
        assert refused.status_code == 422 and refused.json()["field"] == "cursor"


def test_the_sdk_lists_episodes(server: LiveServer) -> None:
    key = server.key()
    _write(server, key, 40)
    with Client(server.url, key) as client:
        first = client.list_episodes(limit=30)
        rest = client.list_episodes(limit=30, cursor=first.next_cursor)
        assert len(first.episodes) == 30 and len(rest.episodes) == 10 and rest.next_cursor is None
        assert first.total is None and client.list_episodes(limit=30, count=True).total == 40  # asked for: counted
        assert client.list_episodes(session_id="s2", limit=3, count=True).total == 13
        assert [e.event["turnIndex"] for e in first.episodes + rest.episodes] == list(reversed(range(40)))
        assert [e.event["turnIndex"] for e in client.list_episodes(session_id="s2", limit=3).episodes] == [38, 35, 32]
        try:
            client.list_episodes(limit=0)
        except InvalidInputError as error:  # refused before it is sent
            assert error.field == "limit"
        else:
            raise AssertionError("limit=0 was accepted")
