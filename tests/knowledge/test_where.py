"""The where-language, table-driven, on both backends: every operator, related labels two deep,
``$not`` over a relation, date-time parts, order and pages, aggregates, and meaning."""

from __future__ import annotations

from typing import Any

import pytest

from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.knowledge import LinkRequest, RecordSearch, RecordWrite
from tests.factories import participant, scope_fields

MINE = scope_fields()
THEIRS = scope_fields(participantScopeHash=participant("bob"))

PROJECTS = [
    {
        "name": "billing",
        "budget": 120000,
        "startedAt": "2026-01-15T09:00:00Z",
        "OWNER": {"name": "Carol"},
        "TASK": [
            {
                "title": "Write the invoice migration",
                "status": "open",
                "priority": 3,
                "assignee": "Alice",
                "dueDate": "2026-03-10T12:00:00Z",
                "tags": ["db", "migration"],
            },
            {
                "title": "Review tax rules",
                "status": "done",
                "priority": 1,
                "assignee": "Bob",
                "dueDate": "2026-02-01T00:00:00Z",
            },
        ],
    },
    {
        "name": "auth",
        "budget": 50000,
        "startedAt": "2025-11-02T00:00:00Z",
        "OWNER": {"name": "Dan"},
        "TASK": [
            {
                "title": "Rotate signing keys",
                "status": "open",
                "priority": 5,
                "assignee": "Alice",
                "dueDate": "2026-06-30T00:00:00Z",
                "blocked": True,
            },
            {"title": "Write SSO docs", "status": "open", "priority": 2},
        ],
    },
]
T1, T2, T3, T4 = "Write the invoice migration", "Review tax rules", "Rotate signing keys", "Write SSO docs"

# (labels, where, the titles or names it finds); a set where order is not asked for.
CASES: list[tuple[list[str], dict[str, Any], set[str]]] = [
    (["TASK"], {"status": "open"}, {T1, T3, T4}),
    (["TASK"], {"status": {"$ne": "open"}}, {T2}),
    (["TASK"], {"priority": {"$gte": 3}}, {T1, T3}),
    (["TASK"], {"priority": {"$gt": 1, "$lt": 5}}, {T1, T4}),
    (["TASK"], {"priority": {"$lte": 1}}, {T2}),
    (["TASK"], {"assignee": {"$in": ["Alice", "Bob"]}}, {T1, T2, T3}),
    (["TASK"], {"assignee": {"$nin": ["Alice"]}}, {T2, T4}),
    (["TASK"], {"title": {"$contains": "write"}}, {T1, T4}),  # text matching ignores case
    (["TASK"], {"title": {"$startsWith": "Rotate"}}, {T3}),
    (["TASK"], {"title": {"$endsWith": "DOCS"}}, {T4}),
    (["TASK"], {"dueDate": {"$exists": False}}, {T4}),
    (["TASK"], {"assignee": {"$exists": True}}, {T1, T2, T3}),
    (["TASK"], {"tags": "db"}, {T1}),  # a list matches on any element
    (["TASK"], {"blocked": True}, {T3}),
    (["TASK"], {"$or": [{"priority": {"$gte": 5}}, {"status": "done"}]}, {T2, T3}),
    (["TASK"], {"$and": [{"status": "open"}, {"assignee": "Alice"}]}, {T1, T3}),
    (["TASK"], {"$not": {"status": "open"}}, {T2}),
    (["TASK"], {"dueDate": {"$gte": "2026-03-01T00:00:00Z"}}, {T1, T3}),
    (["TASK"], {"dueDate": {"$lt": "2026-03-01T09:00:00+09:00"}}, {T2}),  # offsets are compared as instants
    (["TASK"], {"dueDate": {"$month": 3}}, {T1}),
    (["TASK"], {"dueDate": {"$year": 2026, "$month": {"$lte": 3}}}, {T1, T2}),
    (["TASK"], {"dueDate": {"$day": {"$gte": 10}, "$hour": 12}}, {T1}),
    (["PROJECT"], {"budget": {"$gt": 100000}}, {"billing"}),
    (["PROJECT"], {"startedAt": {"$year": 2025}}, {"auth"}),
    (["TASK"], {"PROJECT": {"name": "billing"}}, {T1, T2}),
    (["TASK"], {"PROJECT": {"$relation": {"type": "HAS_TASK", "direction": "in"}, "name": "auth"}}, {T3, T4}),
    (["TASK"], {"PROJECT": {"$relation": {"type": "HAS_TASK", "direction": "out"}}}, set()),
    (["TASK"], {"PROJECT": {"$relation": "HAS_OWNER"}}, set()),
    (["TASK"], {"PROJECT": {"OWNER": {"name": "Carol"}}}, {T1, T2}),  # two labels deep
    (["TASK"], {"status": "open", "PROJECT": {"budget": {"$lt": 100000}, "OWNER": {"name": "Dan"}}}, {T3, T4}),
    (["OWNER"], {"PROJECT": {"TASK": {"assignee": "Bob"}}}, {"Carol"}),  # two deep, the other way
    (["TASK"], {"ENTITY": {"name": "Alice"}}, {T1}),
    (["TASK"], {"$not": {"ENTITY": {"name": "Alice"}}}, {T2, T3, T4}),  # $not over a relation
    (["PROJECT"], {"$not": {"TASK": {"status": "done"}}}, {"auth"}),
    ([], {"name": {"$in": ["billing", "Carol"]}}, {"billing", "Carol"}),  # any label
    # More than 4 conditions: on PostgreSQL the planner joins 4 (equalities first), the rest are probes.
    (
        ["TASK"],
        {
            "priority": {"$gt": 0},
            "title": {"$contains": "e"},
            "dueDate": {"$exists": True},
            "$not": {"status": "done"},
            "assignee": "Alice",
            "tags": "db",
        },
        {T1},
    ),
    (
        ["TASK"],
        {
            "status": "open",
            "priority": {"$gte": 2},
            "assignee": {"$exists": True},
            "title": {"$contains": "r"},
            "$and": [{"$not": {"blocked": True}}, {"PROJECT": {"name": "billing"}}],
            "$or": [{"tags": "db"}, {"tags": {"$exists": False}}],
        },
        {T1},
    ),
]


@pytest.fixture
def graph(service: MemoryService, operator: Caller) -> MemoryService:
    write = service.record_writes.write_records
    projects = {"label": "PROJECT", "data": PROJECTS, "mergeBy": ["name"], "scope": MINE}
    write(operator, RecordWrite.model_validate(projects))
    alice = write(operator, RecordWrite.model_validate({"label": "ENTITY", "data": {"name": "Alice"}, "scope": MINE}))
    task = _search(service, operator, ["TASK"], {"title": T1})[0]
    service.record_writes.link_records(
        operator,
        LinkRequest.model_validate(
            {"source": task["id"], "target": alice.records[0].id, "type": "MENTIONS", "scope": MINE}
        ),
    )
    # Another participant's copy of the same graph: no case may see it.
    write(operator, RecordWrite.model_validate({"label": "PROJECT", "data": PROJECTS, "scope": THEIRS}))
    return service


def _search(
    service: MemoryService, caller: Caller, labels: list[str], where: dict[str, Any], **options: Any
) -> list[dict[str, Any]]:
    body = RecordSearch.model_validate({"labels": labels, "where": where, "scope": MINE, **options})
    return [r.model_dump() for r in service.record_reads.search_records(caller, body).records]


def _names(records: list[dict[str, Any]]) -> list[str]:
    return [r["properties"].get("title") or r["properties"]["name"] for r in records]


def test_where(graph: MemoryService, operator: Caller) -> None:
    """Every case of the table (one store for all of them; every mismatch is reported)."""
    wrong = []
    for labels, where, expected in CASES:
        found = _names(_search(graph, operator, labels, where))
        total = graph.record_reads.search_records(
            operator, RecordSearch.model_validate({"labels": labels, "where": where, "scope": MINE, "count": True})
        ).total
        if sorted(found) != sorted(expected) or total != len(expected):  # no duplicates either
            wrong.append((labels, where, sorted(expected), sorted(found), total))
    assert wrong == []


def test_the_suite_sees_every_record_of_the_scope(graph: MemoryService, operator: Caller) -> None:
    # The positive control of the empty cases: without conditions, every TASK of this scope.
    assert sorted(_names(_search(graph, operator, ["TASK"], {}))) == sorted([T1, T2, T3, T4])
    assert len(_search(graph, operator, [], {})) == 2 + 2 + 4 + 1  # projects, owners, tasks, Alice


def test_order_and_pages(graph: MemoryService, operator: Caller) -> None:
    by_priority = _names(_search(graph, operator, ["TASK"], {}, orderBy={"priority": "desc"}))
    assert by_priority == [T3, T1, T4, T2]
    page = _names(_search(graph, operator, ["TASK"], {}, orderBy={"priority": "asc"}, limit=2, skip=1))
    assert page == [T4, T1]
    by_title = _names(_search(graph, operator, ["TASK"], {"status": "open"}, orderBy={"title": "asc"}))
    assert by_title == [T3, T4, T1]  # "Write SSO" before "Write the"
    newest = _names(_search(graph, operator, ["TASK"], {}))  # default: newest first
    assert newest == _names(_search(graph, operator, ["TASK"], {}, orderBy={"$createdAt": "desc"}))
    missing_last = _names(_search(graph, operator, ["TASK"], {}, orderBy={"dueDate": "asc"}))
    assert missing_last == [T2, T1, T3, T4]  # a record without the property sorts after those with it


def test_aggregates(graph: MemoryService, operator: Caller) -> None:
    body = RecordSearch.model_validate(
        {
            "labels": ["TASK"],
            "scope": MINE,
            "groupBy": ["status"],
            "aggregate": {
                "n": {"fn": "count"},
                "top": {"fn": "max", "field": "priority"},
                "mean": {"fn": "avg", "field": "priority"},
                "total": {"fn": "sum", "field": "priority"},
                "low": {"fn": "min", "field": "priority"},
            },
        }
    )
    rows = graph.record_reads.search_records(operator, body).aggregates
    assert rows is not None
    got = {r.group["status"]: r.values for r in rows}
    assert got == {
        "done": {"n": 1, "top": 1, "mean": 1, "total": 1, "low": 1},
        "open": {"n": 3, "top": 5, "mean": pytest.approx(10 / 3, abs=1e-6), "total": 10, "low": 2},
    }
    related = RecordSearch.model_validate(
        {
            "labels": ["TASK"],
            "where": {"PROJECT": {"OWNER": {"name": "Carol"}}},
            "scope": MINE,
            "aggregate": {"n": {"fn": "count"}},
        }
    )
    assert [r.values for r in graph.record_reads.search_records(operator, related).aggregates or []] == [{"n": 2}]


def test_meaning_with_the_where_as_prefilter(graph: MemoryService, operator: Caller) -> None:
    drain(graph.shared.store.tenant("t1"), graph.shared.embedder)
    found = _search(graph, operator, ["TASK"], {"status": "open"}, query="invoice migration")
    assert _names(found)[0] == T1 and T2 not in _names(found)  # done: filtered out before ranking
    assert all(r["score"] is not None for r in found)
    done = _search(graph, operator, ["TASK"], {"status": "done"}, query="invoice migration")
    assert _names(done) == [T2]  # the positive control: the filter, not the ranking, left it out


def test_total_when_counted_or_when_the_page_holds_the_last_match(graph: MemoryService, operator: Caller) -> None:
    def total(**options: Any) -> int | None:
        body = RecordSearch.model_validate({"labels": ["TASK"], "scope": MINE, **options})
        return graph.record_reads.search_records(operator, body).total

    assert total(limit=2) is None  # a full page: more may match, and nothing was counted
    assert total(limit=2, count=True) == 4
    assert total(limit=10) == 4 and total(limit=3, skip=3) == 4  # the page holds the last match
    assert total(limit=3, skip=10) is None and total(limit=3, skip=10, count=True) == 4
