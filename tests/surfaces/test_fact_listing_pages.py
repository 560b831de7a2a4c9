"""GET /v1/facts a page at a time: a scope of more facts than a page lists whole through nextCursor
(it stopped at 1,000), newest recorded first, with each filter kept; REST, CLI and MCP text."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from engramdb.api.mcp.text import listed
from engramdb.models.memories import FactList
from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body, participant, scope_fields


def _write(server: LiveServer, key: str, count: int) -> None:
    with server.client(key) as http:
        for i in range(count):
            kind = "tea" if i % 2 else "coffee"
            body = fact_body(f"fact {i}", subject="user", kind=f"{kind}{i}")
            assert http.post("/v1/facts", json=body).status_code == 201, i


def _walk(http: Any, params: dict[str, Any]) -> list[str]:
    seen: list[str] = []
    for _ in range(100):  # bounded: a cursor that leads back to the same page fails, not hangs
        answer = http.get("/v1/facts", params=params)
        assert answer.status_code == 200, answer.text
        page = answer.json()
        seen += [f["event"]["text"] for f in page["facts"]]
        if page["nextCursor"] is None:
            return seen
        assert len(page["facts"]) == params["limit"]  # a page before the last is full
        params = {**params, "cursor": page["nextCursor"]}
    raise AssertionError(f"no last page after 100: {seen[:10]}")


def test_paging_walks_every_fact_once_newest_first(server: LiveServer) -> None:
    key = server.key()
    _write(server, key, 23)
    with server.client(key) as http:
        whole = [f["event"]["text"] for f in http.get("/v1/facts", params={"limit": 1000}).json()["facts"]]
        assert whole == [f"fact {i}" for i in reversed(range(23))]  # the positive control: one page holds all
        assert _walk(http, {"limit": 5}) == whole
        assert _walk(http, {"limit": 23}) == whole  # exactly one page: no cursor to an empty one
        first = http.get("/v1/facts", params={"limit": 23}).json()
        assert first["nextCursor"] is None
        # A filter holds on every page.
        assert _walk(http, {"limit": 3, "kind": "tea7"}) == ["fact 7"]


def test_history_and_corrections_page_as_they_list(server: LiveServer) -> None:
    key = server.key()
    with server.client(key) as http:
        for i in range(6):  # one slot corrected five times: six versions, one current
            body = fact_body(f"lives in city {i}", kind="city", validFrom=f"2026-08-1{i}T00:00:00Z")
            assert http.post("/v1/facts", json=body).status_code == 201
        _write(server, key, 4)
        current = _walk(http, {"limit": 2})
        assert current == [f"fact {i}" for i in reversed(range(4))] + ["lives in city 5"]
        history = _walk(http, {"limit": 4, "includeHistory": "true"})
        everything = http.get("/v1/facts", params={"limit": 1000, "includeHistory": "true"}).json()["facts"]
        assert history == [f["event"]["text"] for f in everything] and len(history) == 10


def test_a_cursor_of_another_listing_scope_or_tenant_is_refused_or_reads_only_its_own(server: LiveServer) -> None:
    alice = server.key()
    bob = server.key(**scope_fields(participantScopeHash=participant("bob")))
    _write(server, alice, 4)
    with server.client(bob) as http:
        assert http.post("/v1/facts", json=fact_body("bob's fact", kind="bob")).status_code == 201
    with server.client(alice) as http:
        cursor = http.get("/v1/facts", params={"limit": 1}).json()["nextCursor"]
        assert cursor is not None
        episodes = http.get("/v1/episodes", params={"cursor": cursor})
        assert episodes.status_code == 422 and episodes.json()["field"] == "cursor"  # a facts cursor pages facts
        for bad in ("not-a-cursor", base64.urlsafe_b64encode(b"facts|2026|12").decode()):
            refused = http.get("/v1/facts", params={"cursor": bad})
            assert refused.status_code == 422 and refused.json()["field"] == "cursor", bad
    with server.client(bob) as http:  # alice's cursor in bob's scope reads bob's facts only
        page = http.get("/v1/facts", params={"cursor": cursor, "limit": 10}).json()
        assert "fact 2" not in {f["event"]["text"] for f in page["facts"]}
        assert [f["event"]["text"] for f in http.get("/v1/facts").json()["facts"]] == ["bob's fact"]


SCOPE: tuple[str, ...] = ("--tenant", "t1", "--agent-id", "coder", "--profile-id", "default", "--privacy", "private")
SCOPE += ("--participant", participant("alice"), "--sandbox-eligible", "false")


def test_the_cli_and_the_mcp_text_say_how_to_ask_for_more(server: LiveServer) -> None:
    from tests.cli import engram

    key = server.key()
    _write(server, key, 3)
    with server.client(key) as http:
        first = FactList.model_validate(http.get("/v1/facts", params={"limit": 2}).json())
        last = FactList.model_validate(http.get("/v1/facts", params={"limit": 3}).json())
    assert first.next_cursor is not None and last.next_cursor is None
    shown = engram("facts", "list", "--limit", "2", *SCOPE, env=server.cli_env())
    assert shown.returncode == 0 and f"more: --cursor {first.next_cursor}" in shown.stdout, shown.stdout
    rest = engram("facts", "list", "--cursor", first.next_cursor, *SCOPE, env=server.cli_env())
    assert rest.returncode == 0 and "fact 0" in rest.stdout and "fact 2" not in rest.stdout, rest.stdout
    assert "more: --cursor" not in rest.stdout  # the last page names no more
    text, _ = listed(first, {})
    assert f"call list_facts again with cursor={first.next_cursor}" in text
    text, _ = listed(last, {})
    assert "More facts" not in text and "fact 0" in text  # the positive control: the whole table, no more


@pytest.mark.parametrize("limit", ["0", "1001", "²"])
def test_a_bad_limit_names_the_field(server: LiveServer, limit: str) -> None:
    with server.client(server.key()) as http:
        answer = http.get("/v1/facts", params={"limit": limit})
        assert answer.status_code == 422 and answer.json()["field"] == "limit"
        assert http.get("/v1/facts", params={"limit": "7"}).status_code == 200  # the positive control


def test_the_dashboard_links_to_older_facts(server: LiveServer) -> None:
    """The Memories page's facts: a page, then a link to the older ones (it showed the newest 1,000)."""
    import html
    import re

    key = server.key()
    _write(server, key, 3)
    with server.client(key) as http:
        first = http.get("/ui/part/memories", params={"show": "facts", "limit": 2})
        assert first.status_code == 200 and "fact 2" in first.text and "fact 0" not in first.text
        link = re.search(r'id="facts-more"><a href="/ui/memories\?([^"]+)">Older facts</a>', first.text)
        assert link is not None, first.text
        older = http.get(f"/ui/part/memories?{html.unescape(link.group(1))}")
        assert older.status_code == 200 and "fact 0" in older.text and "fact 2" not in older.text
        assert "Older facts" not in older.text  # the last page links no further


@pytest.mark.parametrize("time", ["\x00", "\ud800", "2026-01-01", "9999-99-99T99:99:99.999999Z "])
def test_a_real_cursor_with_its_time_edited_names_the_field(server: LiveServer, time: str) -> None:
    """PostgreSQL's text takes no NUL, and a lone surrogate encodes nowhere: both answered 500."""
    key = server.key()
    _write(server, key, 3)
    with server.client(key) as http:
        for path in ("/v1/episodes", "/v1/facts"):
            if path == "/v1/episodes":
                for turn in range(3):
                    http.post("/v1/episodes", json=episode_body(f"turn {turn}", turn=turn))
            cursor = http.get(path, params={"limit": 1}).json()["nextCursor"]
            listing, _, sealed = base64.urlsafe_b64decode(cursor).decode().split("|")
            edited = base64.urlsafe_b64encode(f"{listing}|{time}|{sealed}".encode("utf-8", "surrogatepass")).decode()
            answer = http.get(path, params={"cursor": edited})
            assert answer.status_code == 422 and answer.json()["field"] == "cursor", (path, answer.text)
            assert http.get(path, params={"cursor": cursor}).status_code == 200  # the positive control


def test_a_page_of_facts_is_read_through_the_index_by_recorded_time(settings: Any) -> None:
    """Each page sorted every fact of its scope (100,000 facts: 101 pages in 37.5 s, a review helper)."""
    import sqlite3

    from engramdb.storage.columns import MEMORY_COLUMNS, facts_clause
    from engramdb.storage.rows import CandidateFilter, ListPosition
    from engramdb.storage.sqlite.store import SQLiteStore

    store = SQLiteStore(settings.home)
    path = store.tenant("t1", create=True).path
    store.close()
    filt = CandidateFilter(statuses=("active", "pending_review"), sources=("MEMORY_FACT",))
    below = ListPosition("2026-01-01T00:00:00.000000Z", 5)
    where, params = facts_clause(filt, subject_key=None, kind=None, below=below)

    def plan() -> str:
        with sqlite3.connect(path) as conn:
            sql = f"EXPLAIN QUERY PLAN SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.scope_key = ?{where}"
            return " ".join(str(r[3]) for r in conn.execute(sql, ["k", *params, 10]))

    assert "memories_facts_by_recorded" in plan() and "TEMP B-TREE" not in plan()  # a new file
    with sqlite3.connect(path) as conn:  # what an earlier version's file had
        conn.execute("DROP INDEX memories_facts_by_recorded")
    assert "TEMP B-TREE" in plan()  # the control: without it, each page sorts the scope
    reopened = SQLiteStore(settings.home)
    reopened.tenant("t1")  # the tenant's file opened again: it gets the index
    reopened.close()
    assert "memories_facts_by_recorded" in plan() and "TEMP B-TREE" not in plan()
