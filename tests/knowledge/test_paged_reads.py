"""Reads whose answer grows with what a key wrote come a page at a time, on both backends: a
node's relationships and a record's versions by cursor, an export up to its relationship limit,
aggregate groups by limit and skip. Each was one answer of everything: 20,000 relationships of one
record took 1.1 s and 4.3 MB to list, and an export from it 3.1 s (bench/RESULTS.md, session 43)."""

from __future__ import annotations

from typing import Any

import pytest

from engramdb.core.auth import Caller
from engramdb.core.knowledge import reading
from engramdb.core.service import MemoryService
from engramdb.errors import InvalidInputError
from engramdb.models.knowledge import (
    ExportRequest,
    HistoryQuery,
    LinkRequest,
    RecordChange,
    RecordSearch,
    RecordWrite,
    RelationshipQuery,
)
from tests.conftest import LiveServer
from tests.factories import scope_fields

MINE = scope_fields()
CHILDREN = 250


def _hub(service: MemoryService, caller: Caller, children: int = CHILDREN) -> tuple[str, list[str]]:
    """A SESSION with ``children`` TASKs (HAS_TASK out of it); the session's id and the tasks' ids."""
    body = {"label": "SESSION", "scope": MINE, "data": {"title": "hub", "TASK": [{"n": i} for i in range(children)]}}
    hub = service.record_writes.write_records(caller, RecordWrite.model_validate(body)).records[0].id
    tasks = service.record_reads.search_records(
        caller, RecordSearch.model_validate({"labels": ["TASK"], "limit": 1000, "scope": MINE})
    )
    return hub, [r.id for r in tasks.records]


def _pages(
    service: MemoryService, caller: Caller, cursor: str | None = None, **query: Any
) -> list[list[tuple[str, str, str]]]:
    pages = []
    while True:
        found = service.record_reads.list_relationships(
            caller, RelationshipQuery.model_validate({**MINE, **query, "cursor": cursor})
        )
        pages.append([(r.type, r.source.id, r.target.id) for r in found.relationships])
        if found.next_cursor is None:
            return pages
        cursor = found.next_cursor


def test_a_hubs_relationships_come_a_page_at_a_time(service: MemoryService, operator: Caller) -> None:
    hub, tasks = _hub(service, operator)
    pages = _pages(service, operator, id=hub, limit=100)
    assert [len(p) for p in pages] == [100, 100, 50]
    listed = [edge for page in pages for edge in page]
    # Control: one page of 1,000 holds them all, in the same order, with no cursor.
    whole = _pages(service, operator, id=hub, limit=1000)
    assert whole == [listed] and len(set(listed)) == CHILDREN
    assert sorted(target for _, _, target in listed) == sorted(tasks)
    assert _pages(service, operator, id=hub) == pages  # 100 is the default page
    # The filters hold on every page: each task has one relationship, into it.
    assert _pages(service, operator, id=tasks[0], direction="in", limit=1) == [[("HAS_TASK", hub, tasks[0])]]
    assert _pages(service, operator, id=tasks[0], direction="out") == [[]]
    assert _pages(service, operator, id=hub, type="HAS_DECISION") == [[]]
    assert [len(p) for p in _pages(service, operator, id=hub, type="HAS_TASK", direction="out", limit=249)] == [
        249,
        1,
    ]


def test_a_relationship_made_between_pages_is_on_a_later_page_and_none_is_listed_twice(
    service: MemoryService, operator: Caller
) -> None:
    hub, _ = _hub(service, operator, children=3)
    first = service.record_reads.list_relationships(
        operator, RelationshipQuery.model_validate({**MINE, "id": hub, "limit": 2})
    )
    late = service.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "NOTE", "data": {"n": 1}, "scope": MINE})
    )
    link = {"source": late.records[0].id, "target": hub, "type": "ABOUT", "scope": MINE}
    service.record_writes.link_records(operator, LinkRequest.model_validate(link))
    rest = _pages(service, operator, id=hub, limit=2, cursor=first.next_cursor)
    seen = [(r.type, r.source.id, r.target.id) for r in first.relationships] + [e for p in rest for e in p]
    assert len(seen) == len(set(seen)) == 4 and seen[-1] == ("ABOUT", late.records[0].id, hub)


def test_a_loop_on_a_node_is_listed_once_going_out_of_it(service: MemoryService, operator: Caller) -> None:
    hub, tasks = _hub(service, operator, children=1)
    link = {"source": hub, "target": hub, "type": "SAME_AS", "scope": MINE}
    service.record_writes.link_records(operator, LinkRequest.model_validate(link))
    loop = ("SAME_AS", hub, hub)
    assert _pages(service, operator, id=hub, limit=1) == [[("HAS_TASK", hub, tasks[0])], [loop]]
    assert _pages(service, operator, id=hub, direction="out") == [[("HAS_TASK", hub, tasks[0]), loop]]
    assert _pages(service, operator, id=hub, direction="in") == [[]]  # as before pages: not into it
    assert _pages(service, operator, id=tasks[0], direction="in") == [[("HAS_TASK", hub, tasks[0])]]  # control


def test_a_cursor_this_list_did_not_answer_is_refused_by_name(service: MemoryService, operator: Caller) -> None:
    hub, _ = _hub(service, operator, children=2)
    for bad in ("nonsense", "2026-01-01|0|x", "2026-01-01|2|1", "|0|1", "2026-01-01|0|99999999999999999999"):
        with pytest.raises(InvalidInputError) as refused:
            service.record_reads.list_relationships(
                operator, RelationshipQuery.model_validate({**MINE, "id": hub, "cursor": bad})
            )
        assert refused.value.field == "cursor", bad
    for bad in ("-1", "v2", "1.5", "99999999999"):
        with pytest.raises(InvalidInputError) as refused:
            service.record_reads.record_history(operator, hub, HistoryQuery.model_validate({**MINE, "cursor": bad}))
        assert refused.value.field == "cursor", bad
    # Control: the cursor a page answered is taken.
    page = service.record_reads.list_relationships(
        operator, RelationshipQuery.model_validate({**MINE, "id": hub, "limit": 1})
    )
    assert page.next_cursor is not None
    nxt = RelationshipQuery.model_validate({**MINE, "id": hub, "cursor": page.next_cursor})
    assert len(service.record_reads.list_relationships(operator, nxt).relationships) == 1


def test_a_records_versions_come_a_page_at_a_time_ending_with_the_current_one(
    service: MemoryService, operator: Caller
) -> None:
    record = service.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "TASK", "data": {"n": 0}, "scope": MINE})
    ).records[0]
    for n in range(1, 250):
        change = RecordChange.model_validate({"properties": {"n": n}, "scope": MINE})
        service.record_writes.update_record(operator, record.id, change)
    pages, cursor = [], None
    while True:
        query = HistoryQuery.model_validate({**MINE, "limit": 100, "cursor": cursor})
        found = service.record_reads.record_history(operator, record.id, query)
        pages.append(found.versions)
        if found.next_cursor is None:
            break
        cursor = found.next_cursor
    assert [len(p) for p in pages] == [100, 100, 50]
    versions = [v for page in pages for v in page]
    assert [v.version for v in versions] == list(range(1, 251))
    assert [v.properties["n"] for v in versions] == list(range(250))
    assert versions[-1].until is None and all(v.until is not None for v in versions[:-1])
    # Control: a page of 1,000 holds them all; a page that ends just before the current version
    # points at it, and the current version alone is the last page.
    whole = service.record_reads.record_history(
        operator, record.id, HistoryQuery.model_validate({**MINE, "limit": 1000})
    )
    assert whole.versions == versions and whole.next_cursor is None
    before = service.record_reads.record_history(
        operator, record.id, HistoryQuery.model_validate({**MINE, "limit": 49, "cursor": "200"})
    )
    assert [v.version for v in before.versions][-1] == 249 and before.next_cursor == "249"
    last = service.record_reads.record_history(
        operator, record.id, HistoryQuery.model_validate({**MINE, "cursor": before.next_cursor})
    )
    assert [v.version for v in last.versions] == [250] and last.next_cursor is None


def test_an_export_stops_at_its_relationship_limit_and_says_so(
    service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert reading.EXPORT_RELATIONSHIPS == 2_000  # the limit docs/knowledge.md names (lowered below)
    hub, tasks = _hub(service, operator, children=120)

    def export(**body: Any) -> Any:
        return service.record_reads.export_records(operator, ExportRequest.model_validate({**body, "scope": MINE}))

    monkeypatch.setattr(reading, "EXPORT_RELATIONSHIPS", 50)
    cut = export(labels=["SESSION"], depth=2)
    assert cut.truncated and len(cut.relationships) == 50 and len(cut.records) == 51  # the hub and 50 tasks
    # From the tasks, the second hop meets the 120 relationships it holds again: they do not use up its room.
    monkeypatch.setattr(reading, "EXPORT_RELATIONSHIPS", 150)
    again = export(labels=["TASK"], depth=2)
    assert not again.truncated and len(again.relationships) == 120 and len(again.records) == 121
    # Control: with room for all, the hub's export is whole and not marked.
    whole = export(labels=["SESSION"], depth=2)
    assert not whole.truncated and len(whole.relationships) == 120
    assert {r.id for r in whole.records} == {hub, *tasks}


def test_aggregate_groups_are_paged_by_limit_and_skip(service: MemoryService, operator: Caller) -> None:
    data = [{"team": f"team{i:02d}", "points": i} for i in range(30)]
    service.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "SCORE", "data": data, "scope": MINE})
    )

    service.record_writes.write_records(  # a score of no team: its group comes last on both backends
        operator, RecordWrite.model_validate({"label": "SCORE", "data": {"points": 100}, "scope": MINE})
    )
    more: list[bool | None] = []

    def groups(**page: Any) -> list[tuple[str, Any]]:
        body = {"labels": ["SCORE"], "aggregate": {"sum": {"fn": "sum", "field": "points"}}, "groupBy": ["team"]}
        found = service.record_reads.search_records(
            operator, RecordSearch.model_validate({**body, **page, "scope": MINE})
        )
        more.append(found.more_groups)
        return [(row.group["team"], row.values["sum"]) for row in found.aggregates or []]

    assert groups(limit=10, skip=10) == [(f"team{i:02d}", i) for i in range(10, 20)] and more[-1] is True
    everything = [*((f"team{i:02d}", i) for i in range(30)), (None, 100)]
    assert groups(limit=1000) == everything and more[-1] is False  # control: every group, the last one said
    assert groups(limit=31) == everything and more[-1] is False  # as many as there are: none follow
    assert groups(limit=30, skip=1) == everything[1:] and more[-1] is False
    assert groups(limit=30) == everything[:30] and more[-1] is True  # one fewer: one follows
    ungrouped = service.record_reads.search_records(
        operator, RecordSearch.model_validate({"labels": ["SCORE"], "aggregate": {"n": {"fn": "count"}}, "scope": MINE})
    )
    assert ungrouped.more_groups is None and ungrouped.aggregates is not None  # no groups, nothing to page


def test_paged_reads_over_rest(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        hub = {"label": "HUB", "data": {"name": "hub", "NOTE": [{"n": i} for i in range(150)]}}
        hub_id = http.post("/v1/records", json=hub).json()["records"][0]["id"]
        first = http.get("/v1/relationships", params={"id": hub_id})
        assert first.status_code == 200 and len(first.json()["relationships"]) == 100, first.text[:300]
        cursor = first.json()["nextCursor"]
        rest = http.get("/v1/relationships", params={"id": hub_id, "cursor": cursor})
        assert len(rest.json()["relationships"]) == 50 and rest.json()["nextCursor"] is None
        bad = http.get("/v1/relationships", params={"id": hub_id, "cursor": "not-one"})
        assert bad.status_code == 422 and bad.json()["field"] == "cursor", bad.text
        too_many = http.get("/v1/relationships", params={"id": hub_id, "limit": 1001})
        assert too_many.status_code == 422 and "limit" in too_many.text, too_many.text
        history = http.get(f"/v1/records/{hub_id}/history", params={"limit": 1})
        assert history.status_code == 200 and history.json()["versions"][0]["version"] == 1, history.text
        assert history.json()["nextCursor"] is None  # one version: the current one
        exported = http.post("/v1/records/export", json={"labels": ["HUB"]})
        assert exported.status_code == 200 and exported.json()["truncated"] is False


def test_the_dashboards_record_page_shows_the_newest_versions(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engramdb.api.ui import records

    monkeypatch.setattr(records, "SHOWN_VERSIONS", 3)
    with server.client(server.key()) as http:
        record_id = http.post("/v1/records", json={"label": "TASK", "data": {"n": 0}}).json()["records"][0]["id"]
        page = http.get(f"/ui/part/records/{record_id}").text
        assert "<strong>v1</strong> (current)" in page and "earlier versions" not in page  # control: one version
        for n in range(1, 7):
            assert http.patch(f"/v1/records/{record_id}", json={"properties": {"n": n}}).status_code == 200
        page = http.get(f"/ui/part/records/{record_id}").text
    shown = [v for v in range(1, 8) if f"<strong>v{v}</strong>" in page]
    assert shown == [5, 6, 7] and "<strong>v7</strong> (current)" in page, shown
    assert "4 earlier versions are not shown" in page


def test_the_dashboards_record_page_shows_the_newest_versions_that_fit_one_answer(server: LiveServer) -> None:
    """Six versions of 875 KB: a page of history holds four; the dashboard shows the newest that fit,
    the current one last (it showed v1-v4, without the current one: a review)."""
    big = {f"p{i}": "7" * 15_900 for i in range(55)}  # digits: not embedded
    with server.client(server.key()) as http:
        record_id = http.post("/v1/records", json={"label": "TASK", "data": {"n": 0, **big}}).json()["records"][0]["id"]
        for n in range(1, 6):
            assert http.patch(f"/v1/records/{record_id}", json={"properties": {"n": n}}).status_code == 200
        page = http.get(f"/ui/part/records/{record_id}").text
    shown = [v for v in range(1, 7) if f"<strong>v{v}</strong>" in page]
    assert shown == [3, 4, 5, 6] and "<strong>v6</strong> (current)" in page, shown
    assert "2 earlier versions are not shown" in page


@pytest.mark.parametrize("limit", ["abc", "²", "①", "-1"])
def test_the_dashboards_record_search_refuses_a_limit_that_is_no_number_naming_it(
    server: LiveServer, limit: str
) -> None:
    form = {"labels": "", "where": "", "orderBy": ""}
    with server.client(server.key()) as http:
        assert http.post("/v1/records", json={"label": "TASK", "data": {"n": 0}}).status_code == 201
        listed = http.post("/ui/part/records", data={**form, "limit": "5"})  # the positive control: a number
        assert listed.status_code == 200 and "TASK" in listed.text, listed.text
        refused = http.post("/ui/part/records", data={**form, "limit": limit})
    assert refused.status_code == 422 and "limit" in refused.text, refused.text
