"""A fact's history comes a page at a time, on both backends, through REST: oldest first or newest
first, by a cursor that neither repeats nor hides a version written between two pages, with the
slot's tombstones on the first page. A slot written every turn was one answer of every version."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer
from tests.factories import fact_body, participant


def _write(http: httpx.Client, n: int) -> str:
    text, turn, valid = f"The user is working on task {n}.", f"turn-{n}", f"2026-01-01T00:00:{n:02d}Z"
    body = fact_body(text, kind="current_task", sourceEventId=turn, validFrom=valid)
    answer = http.post("/v1/facts", json=body)
    assert answer.status_code in (200, 201), answer.text
    return str(answer.json()["id"])


def _slot(http: httpx.Client, versions: int) -> list[str]:
    """A slot of ``versions`` versions, the last a correction (its old value tombstoned); their ids, oldest first."""
    ids = [_write(http, n) for n in range(versions - 1)]
    corrected = http.post(f"/v1/facts/{ids[-1]}/correct", json={"text": "The user is on task 99.", "reason": "wrong"})
    assert corrected.status_code == 201, corrected.text
    return [*ids, corrected.json()["id"]]


def _pages(http: httpx.Client, fact_id: str, **query: Any) -> list[dict[str, Any]]:
    pages, cursor = [], None
    while True:
        answer = http.get(f"/v1/facts/{fact_id}/history", params={**query, **({"cursor": cursor} if cursor else {})})
        assert answer.status_code == 200, answer.text
        pages.append(answer.json())
        cursor = pages[-1]["nextCursor"]
        if cursor is None:
            return pages


def _ids(pages: list[dict[str, Any]]) -> list[list[str]]:
    return [[v["id"] for v in page["versions"]] for page in pages]


def test_a_facts_history_comes_a_page_at_a_time_in_either_order(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        ids = _slot(http, 7)
        whole = http.get(f"/v1/facts/{ids[0]}/history", params={"limit": 1000}).json()
        assert [v["id"] for v in whole["versions"]] == ids and whole["nextCursor"] is None
        retired = {t["tombstoneId"]: t["factId"] for t in whole["tombstones"]}
        assert whole["total"] == 7 and set(retired.values()) == set(ids[:6])  # each replaced version's value

        oldest = _pages(http, ids[3], limit=3)  # any version names the same history
        assert _ids(oldest) == [ids[0:3], ids[3:6], ids[6:7]]
        assert [p["total"] for p in oldest] == [7, 7, 7]
        for page in oldest:  # a page carries the values its own versions retired, and no others
            shown = {v["id"] for v in page["versions"]}
            assert {t["tombstoneId"] for t in page["tombstones"]} == {t for t, f in retired.items() if f in shown}

        newest = _pages(http, ids[0], limit=3, newestFirst="true")
        assert _ids(newest) == [ids[6:3:-1], ids[3:0:-1], ids[0:1]]
        assert http.get(f"/v1/facts/{ids[0]}/history").json()["versions"][0]["id"] == ids[0]  # default: oldest first


def test_a_version_written_between_two_pages_is_neither_repeated_nor_hidden(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        ids = _slot(http, 4)
        first = http.get(f"/v1/facts/{ids[0]}/history", params={"limit": 2}).json()
        later = _write(http, 4)  # a newer version lands after the first page was read
        rest = _pages(http, ids[0], limit=2, cursor=first["nextCursor"])
        assert [v["id"] for v in first["versions"]] + [i for page in _ids(rest) for i in page] == [*ids, later]
        assert rest[0]["total"] == 5


def test_a_page_after_a_version_erased_since_starts_after_its_times(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        ids = _slot(http, 5)
        whole = http.get(f"/v1/facts/{ids[0]}/history").json()["versions"]
        at = [whole[2]["validFrom"], whole[2]["recordedAt"]]
        gone = base64.urlsafe_b64encode(json.dumps([*at, "0" * 64, "old"]).encode()).decode()  # no longer there
        kept = base64.urlsafe_b64encode(json.dumps([*at, ids[2], "old"]).encode()).decode()  # the positive control
        for cursor in (gone, kept):
            page = http.get(f"/v1/facts/{ids[0]}/history", params={"cursor": cursor})
            assert page.status_code == 200 and [v["id"] for v in page.json()["versions"]] == ids[3:], page.text


def test_a_cursor_holds_no_row_number(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        ids = _slot(http, 3)
        cursor = http.get(f"/v1/facts/{ids[0]}/history", params={"limit": 1}).json()["nextCursor"]
        version = http.get(f"/v1/facts/{ids[0]}").json()
    assert json.loads(base64.urlsafe_b64decode(cursor)) == [version["validFrom"], version["recordedAt"], ids[0], "old"]


def test_a_cursor_reads_on_only_in_the_order_it_was_read(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        ids = _slot(http, 4)
        oldest = http.get(f"/v1/facts/{ids[0]}/history", params={"limit": 2}).json()["nextCursor"]
        newest = http.get(f"/v1/facts/{ids[0]}/history", params={"limit": 2, "newestFirst": "true"}).json()
        on = http.get(f"/v1/facts/{ids[0]}/history", params={"cursor": newest["nextCursor"], "newestFirst": "true"})
        assert [v["id"] for v in on.json()["versions"]] == ids[1::-1]  # the positive control: the same order
        back = http.get(f"/v1/facts/{ids[0]}/history", params={"cursor": oldest, "newestFirst": "true"})
    assert back.status_code == 422 and back.json()["field"] == "cursor" and "newestFirst=false" in back.text


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": "WyJhIiwgImIiLCAtMV0="}, "cursor"),  # JSON, but not of this form
        ({"cursor": "ImFiYyI="}, "cursor"),  # a JSON string of three characters
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
    ],
)
def test_a_bad_page_is_refused_naming_its_field(server: LiveServer, query: dict[str, Any], field: str) -> None:
    with server.client(server.key()) as http:
        fact_id = _write(http, 0)
        assert http.get(f"/v1/facts/{fact_id}/history").status_code == 200  # the positive control
        answer = http.get(f"/v1/facts/{fact_id}/history", params=query)
    assert answer.status_code == 422 and field in answer.text, answer.text


def test_the_dashboards_timeline_shows_the_newest_versions(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from engramdb.api.ui import timeline

    monkeypatch.setattr(timeline, "SHOWN_VERSIONS", 3)
    with server.client(server.key()) as http:
        first = _write(http, 0)
        page = http.get(f"/ui/part/facts/{first}").text
        assert "v1 <code>" in page and "earlier versions" not in page  # the positive control: one version
        ids = [first, *(_write(http, n) for n in range(1, 7))]
        page = http.get(f"/ui/part/facts/{first}").text
        newest_page = http.get(f"/ui/part/facts/{ids[-1]}").text
    shown = [v for v in range(1, 8) if f"v{v} <code>{ids[v - 1][:8]}" in page]
    assert shown == [5, 6, 7], shown
    charted = [v for v in range(1, 8) if f'text-anchor="end">v{v}</text>' in page]
    assert charted == [5, 6, 7], charted  # the chart's lanes as the table numbers them
    assert "4 earlier versions are not shown" in page
    assert f"The version you opened, <code>{first[:8]}</code>, is earlier" in page
    assert "The version you opened" not in newest_page  # the positive control: it is among those shown


# The CLI on the server's store: its tenant, and the scope of server.key() (tests/factories.py).
SCOPE: tuple[str, ...] = ("--tenant", "t1", "--agent-id", "coder", "--profile-id", "default", "--privacy", "private")
SCOPE += ("--participant", participant("alice"), "--sandbox-eligible", "false")


def test_the_cli_and_the_mcp_tool_say_where_more_versions_are(server: LiveServer) -> None:
    from engramdb.api.mcp.text import history
    from engramdb.models.lifecycle import FactHistory
    from tests.cli import engram

    with server.client(server.key()) as http:
        ids = _slot(http, 3)
        page = http.get(f"/v1/facts/{ids[0]}/history", params={"limit": 2}).json()
        last = http.get(f"/v1/facts/{ids[0]}/history", params={"cursor": page["nextCursor"]}).json()
    shown = engram("facts", "history", ids[0], "--limit", "2", *SCOPE, env=server.cli_env())
    assert shown.returncode == 0 and f"2 of 3 versions; more: --cursor {page['nextCursor']}" in shown.stdout
    whole = engram("facts", "history", ids[0], *SCOPE, env=server.cli_env())
    assert whole.returncode == 0 and "more: --cursor" not in whole.stdout  # the positive control: all of it
    text, _ = history(FactHistory.model_validate(page), {"newest_first": False})
    assert f"newest_first=false and cursor={page['nextCursor']}" in text and "2 of its 3 versions" in text
    assert "More versions" not in history(FactHistory.model_validate(last), {"newest_first": False})[0]
