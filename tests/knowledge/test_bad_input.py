"""Bad knowledge-plane input answers 422 with a JSON problem naming the field, and writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import LiveServer

DEEP = {"A": {"B": {"C": {"D": {"E": {"name": "x"}}}}}}  # five related labels below the root
WIDE = {"$or": [{"n": i} for i in range(120)]}
WRITES: list[tuple[str, dict[str, Any], str]] = [
    ("lowercase label", {"label": "task", "data": {"title": "x"}}, "label"),
    ("label with a space", {"label": "TASK LIST", "data": {"title": "x"}}, "label"),
    ("property not camelCase", {"label": "TASK", "data": {"Title": "x"}}, "data.Title"),
    (
        "nested child's bad property",
        {"label": "SESSION", "data": {"title": "s", "TASK": [{"ok": 1}, {"bad-name": 2}]}},
        "data.TASK[1].bad-name",
    ),
    ("a list in a list", {"label": "TASK", "data": {"tags": [["a"]]}}, "data.tags"),
    ("a number too large", {"label": "TASK", "data": {"n": 2**60}}, "data.n"),
    ("mergeBy naming an absent property", {"label": "TASK", "data": {"title": "x"}, "mergeBy": ["name"]}, "mergeBy"),
    (
        "mergeBy absent from one of several",
        {"label": "TASK", "data": [{"title": "x"}, {"name": "y"}], "mergeBy": ["title"]},
        "mergeBy",
    ),
    ("no record at all", {"label": "TASK", "data": []}, "data"),
    ("data not an object", {"label": "TASK", "data": "just text"}, "data"),
]
SEARCHES: list[tuple[str, dict[str, Any], str]] = [
    ("unknown operator", {"where": {"priority": {"$between": [1, 2]}}}, "where.priority.$between"),
    ("wrong operand type for $gt", {"where": {"priority": {"$gt": [1]}}}, "where.priority.$gt"),
    ("a boolean compared by order", {"where": {"done": {"$lt": True}}}, "where.done.$lt"),
    ("$contains on a number", {"where": {"title": {"$contains": 5}}}, "where.title.$contains"),
    ("$in not a list", {"where": {"status": {"$in": "open"}}}, "where.status.$in"),
    ("$exists not a boolean", {"where": {"status": {"$exists": "yes"}}}, "where.status.$exists"),
    ("a date part not a whole number", {"where": {"due": {"$month": "March"}}}, "where.due.$month"),
    ("a date part past any year", {"where": {"due": {"$year": 10**23}}}, "where.due.$year"),  # was a 500
    ("a date part past any year, compared", {"where": {"due": {"$year": {"$gt": 2**64}}}}, "where.due.$year.$gt"),
    ("null as a value", {"where": {"status": None}}, "where.status"),
    ("nested deeper than the limit", {"where": DEEP}, "where.A.B.C.D.E"),
    ("too many conditions", {"where": WIDE}, "where.$or[99].n"),  # $or and 99 n: 100 keys
    ("unknown $ key", {"where": {"$nor": []}}, "where.$nor"),
    (
        "bad relation direction",
        {"where": {"TASK": {"$relation": {"direction": "up"}}}},
        "where.TASK.$relation.direction",
    ),
    ("lowercase label in labels", {"labels": ["task"]}, "labels[0]"),
    ("orderBy on a bad name", {"orderBy": {"Bad Name": "asc"}}, "orderBy.Bad Name"),
    ("aggregate without a field", {"aggregate": {"s": {"fn": "sum"}}}, "aggregate.s.field"),
]


def _problem(answer: Any, field: str) -> None:
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    body = answer.json()
    assert body["field"] == field, body
    assert body["message"].startswith(field), body


@pytest.mark.parametrize(("case", "body", "field"), WRITES, ids=[w[0] for w in WRITES])
def test_bad_writes_name_the_field_and_write_nothing(
    server: LiveServer, case: str, body: dict[str, Any], field: str
) -> None:
    with server.client(server.key()) as http:
        _problem(http.post("/v1/records", json=body), field)
        assert http.post("/v1/records/search", json={}).json()["records"] == []
        fine = http.post("/v1/records", json={"label": "TASK", "data": {"title": "x"}})  # the positive control
        assert fine.status_code == 201 and http.post("/v1/records/search", json={}).json()["total"] == 1


def test_bad_searches_name_the_place_in_the_query(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        task = {"label": "TASK", "data": {"title": "x", "priority": 2}}
        assert http.post("/v1/records", json=task).status_code == 201
        wrong = []
        for case, body, field in SEARCHES:
            answer = http.post("/v1/records/search", json=body)
            if answer.status_code != 422 or answer.json().get("field") != field:
                wrong.append((case, answer.status_code, answer.text[:200]))
        assert wrong == []
        good = {"where": {"A": {"B": {"C": {"D": {"name": "x"}}}}}}  # four deep: the documented limit
        assert http.post("/v1/records/search", json=good).status_code == 200
        assert http.post("/v1/records/search", json={"where": {"priority": {"$gt": 1}}}).json()["total"] == 1


def test_bad_links_and_changes(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        task = http.post("/v1/records", json={"label": "TASK", "data": {"title": "x"}}).json()["records"][0]["id"]
        _problem(http.post("/v1/relationships", json={"source": task, "target": task, "type": "depends on"}), "type")
        _problem(
            http.post("/v1/relationships", json={"source": task, "target": "f" * 32, "type": "DEPENDS_ON"}), "target.id"
        )
        missing_fact = {"source": task, "target": {"id": "0" * 64, "kind": "MEMORY_FACT"}, "type": "MENTIONS"}
        _problem(http.post("/v1/relationships", json=missing_fact), "target.id")
        _problem(http.patch(f"/v1/records/{task}", json={"properties": {"OWNER": {"name": "x"}}}), "properties")
        _problem(http.get("/v1/relationships", params={"id": task, "kind": "THING"}), "kind")
        assert http.get("/v1/relationships", params={"id": task}).json()["relationships"] == []
        loop = {"source": task, "target": task, "type": "DEPENDS_ON"}
        assert http.post("/v1/relationships", json=loop).status_code == 200
