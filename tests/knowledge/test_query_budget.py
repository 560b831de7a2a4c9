"""The where-language's budget (issue 30, findings 1 and 2): a search may ask for no more than
either backend plans quickly. At each limit it is answered (the positive control: the seeded
record is found); one past it answers 422 naming the limit and the place in the query, and so do
the attack report's queries, on both backends, before any SQL runs."""

from __future__ import annotations

from functools import reduce
from typing import Any

import pytest

from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.errors import EngramError, InvalidInputError
from engramdb.models.knowledge import RecordSearch, RecordWrite
from engramdb.storage.knowledge.port import All, Member, Query, Value
from engramdb.storage.port import Store
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import scope_fields
from tests.stores import as_postgres

# The budget as docs/knowledge.md states it.
KEYS, VALUES, NESTING, ORDER, AGGREGATES = 100, 1_000, 8, 8, 16
RECORD = {f"p{i}": "x" for i in range(KEYS)} | {"n": 3}  # what every query at a limit finds


def flat(keys: int) -> dict[str, Any]:
    return {f"p{i}": "x" for i in range(keys)}


def values(count: int, last: str = "x") -> list[str]:
    return [f"v{i}" for i in range(count - 1)] + [last]


def nested(op: str, levels: int, leaf: dict[str, Any]) -> dict[str, Any]:
    """``leaf`` inside ``levels`` objects of ``op`` (``$not`` an object, ``$and``/``$or`` a list)."""
    return reduce(lambda inner, _: {op: inner if op == "$not" else [inner]}, range(levels), leaf)


def aggregates(count: int) -> dict[str, Any]:
    return {f"a{i}": {"fn": "max", "field": "n"} for i in range(count)}


# (case, body, what the seeded record's search answers: records found, or the first aggregate)
AT_LIMIT: list[tuple[str, dict[str, Any]]] = [
    (f"{KEYS} keys", {"where": flat(KEYS)}),
    (f"{KEYS} keys, counted", {"where": flat(KEYS), "count": True}),
    (f"{VALUES} $in values", {"where": {"p0": {"$in": values(VALUES)}}}),
    (f"{VALUES} $in values in two lists", {"where": {"p0": {"$in": values(600)}, "p1": {"$nin": values(400, "y")}}}),
    (f"$not {NESTING} objects deep", {"where": nested("$not", NESTING - 1, {"p0": "y"})}),  # odd: not y
    (f"$and {NESTING} objects deep", {"where": nested("$and", NESTING - 1, {"p0": "x"})}),
    (f"$or {NESTING} objects deep, counted", {"where": nested("$or", NESTING - 1, {"p0": "x"}), "count": True}),
    (f"orderBy {ORDER} keys", {"orderBy": {f"p{i}": "asc" for i in range(ORDER)}}),
    (f"{AGGREGATES} aggregates", {"aggregate": aggregates(AGGREGATES)}),
]
# (case, body, the field named, the limit named)
PAST_LIMIT: list[tuple[str, dict[str, Any], str, int]] = [
    (f"{KEYS + 1} keys", {"where": flat(KEYS + 1)}, f"where.p{KEYS}", KEYS),
    ("500 keys, the attack on PostgreSQL's planner", {"where": flat(500)}, f"where.p{KEYS}", KEYS),
    ("991 keys", {"where": flat(991)}, f"where.p{KEYS}", KEYS),
    ("keys counted inside operators", {"where": {f"p{i}": {"$ne": "y"} for i in range(51)}}, "where.p50", KEYS),
    (f"{VALUES + 1} $in values", {"where": {"p0": {"$in": values(VALUES + 1)}}}, "where.p0.$in", VALUES),
    (
        "values counted over lists",
        {"where": {"p0": {"$in": values(600)}, "p1": {"$nin": values(401)}}},
        "where.p1.$nin",
        VALUES,
    ),
    ("40 keys x 1,000 values", {"where": {f"p{i}": {"$in": values(1000)} for i in range(40)}}, "where.p1.$in", VALUES),
    (f"$not {NESTING + 1} deep", {"where": nested("$not", NESTING, {"p0": "x"})}, "where" + ".$not" * NESTING, NESTING),
    ("$not 39 deep", {"where": nested("$not", 39, {"p0": "x"})}, "where" + ".$not" * NESTING, NESTING),
    ("$and 78 deep", {"where": nested("$and", 78, {"p0": "x"})}, "where" + ".$and[0]" * NESTING, NESTING),
    (f"orderBy {ORDER + 1} keys", {"orderBy": {f"p{i}": "asc" for i in range(ORDER + 1)}}, f"orderBy.p{ORDER}", ORDER),
    ("orderBy 1,100 keys", {"orderBy": {f"p{i}": "asc" for i in range(1100)}}, f"orderBy.p{ORDER}", ORDER),
    (f"{AGGREGATES + 1} aggregates", {"aggregate": aggregates(AGGREGATES + 1)}, f"aggregate.a{AGGREGATES}", AGGREGATES),
    ("3,000 aggregates", {"aggregate": aggregates(3000)}, f"aggregate.a{AGGREGATES}", AGGREGATES),
]


@pytest.fixture
def http(server: LiveServer) -> Any:
    with server.client(server.key()) as client:
        assert client.post("/v1/records", json={"label": "TASK", "data": RECORD}).status_code == 201
        yield client


@pytest.mark.parametrize(("case", "body"), AT_LIMIT, ids=[c[0] for c in AT_LIMIT])
def test_a_search_at_each_limit_is_answered(http: Any, case: str, body: dict[str, Any]) -> None:
    answer = http.post("/v1/records/search", json={"labels": ["TASK"], **body})
    assert answer.status_code == 200, answer.text
    found = answer.json()
    if "aggregate" in body:
        assert found["aggregates"][0]["values"] == {alias: 3 for alias in body["aggregate"]}
    else:
        assert [r["properties"]["n"] for r in found["records"]] == [3]


@pytest.mark.parametrize(("case", "body", "field", "limit"), PAST_LIMIT, ids=[c[0] for c in PAST_LIMIT])
def test_a_search_past_a_limit_names_it_and_the_place(
    http: Any, case: str, body: dict[str, Any], field: str, limit: int
) -> None:
    answer = http.post("/v1/records/search", json={"labels": ["TASK"], **body})
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert (problem["code"], problem["field"]) == ("invalid_input", field)
    assert problem["message"].startswith(field) and f"at most {limit:,}" in problem["message"], problem
    # The same limit holds for a delete's where (it is parsed the same way).
    if "where" in body:
        refused = http.post("/v1/records/delete", json={"labels": ["TASK"], "where": body["where"], "dryRun": True})
        assert (refused.status_code, refused.json()["field"]) == (422, field)


def _unusable(store: Store) -> None:
    """Make every statement of tenant t1 fail from here on (its cached store object stays)."""
    if isinstance(store, SQLiteStore):
        store.tenant("t1").close()  # its connections: the store keeps the tenant
    else:
        as_postgres(store).close()  # the pool: the store keeps its tenants


def test_a_search_past_the_budget_is_refused_before_any_sql(
    store: Store, service: MemoryService, operator: Caller
) -> None:
    scope = scope_fields()
    service.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "TASK", "data": RECORD, "scope": scope})
    )

    def search(**body: Any) -> Any:
        return service.record_reads.search_records(operator, RecordSearch.model_validate({"scope": scope, **body}))

    assert len(search(where=flat(KEYS)).records) == 1
    _unusable(store)
    refusals: list[tuple[dict[str, Any], str]] = [
        ({"where": flat(500)}, f"where.p{KEYS}"),
        ({"where": flat(2), "count": True, "aggregate": aggregates(3000)}, f"aggregate.a{AGGREGATES}"),
        ({"where": flat(2), "orderBy": {f"p{i}": "asc" for i in range(1100)}}, f"orderBy.p{ORDER}"),
    ]
    for body, field in refusals:
        with pytest.raises(InvalidInputError) as refused:
            search(**body)
        assert refused.value.field == field
    with pytest.raises(EngramError) as failed:  # the positive control: a search within it needs the database
        search(where=flat(KEYS), count=True)
    assert not isinstance(failed.value, InvalidInputError)


def test_a_statement_past_the_parameter_budget_is_refused_before_it_runs(store: Store, operator: Caller) -> None:
    """The store's own limit, under the parser's (which keeps every search far below it): 40 lists
    of 1,000 values bind 80,000 parameters, past SQLite's 32,766 and PostgreSQL's 65,535; refused
    as bad input (never a retryable 503 for a search that can never run), on a store that could
    not run it anyway."""
    tenant = store.tenant("t1")

    def lists(count: int) -> Query:
        members = (
            Member(f"p{i}", tuple(Value(f"p{i}", "string", text=f"v{j}") for j in range(1000)), False)
            for i in range(count)
        )
        return Query(labels=("TASK",), where=All(tuple(members)))

    assert tenant.search_record_sizes("s" * 64, lists(2)) == []  # the positive control: 2 lists run
    _unusable(store)
    for run in (tenant.search_record_sizes, tenant.count_records):
        with pytest.raises(InvalidInputError) as refused:
            run("s" * 64, lists(40))
        assert refused.value.field == "where" and "at most 10,000" in refused.value.message
