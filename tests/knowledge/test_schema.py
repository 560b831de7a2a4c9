"""A scope's schema (``GET /v1/records/schema``, MCP ``knowledge_schema``, the dashboard's records page)
counts, for each label, the records that hold each property in each kind, on both backends: read from
the values alone (they carry their record's scope and label), so it must follow writes and deletions of
records and stay within the scope. It joined every value to its record and sorted them: 1.8 s for a
scope of 850,000 values (session 46's hunt); the catalogue index reads them in order
(tests/storage/test_read_indexes.py holds the plan)."""

from __future__ import annotations

from typing import Any

import httpx

from engramdb.storage.port import Store
from tests.conftest import LiveServer
from tests.factories import scope_fields

MINE = scope_fields()
THEIRS = scope_fields(agentId="reviewer-bot")
TASKS: list[dict[str, Any]] = [
    {"title": "Write the migration", "tags": ["db", "billing"], "points": 3},
    {"title": "Review the invoice", "points": 1.5, "done": True},
    {"title": "Plan the launch", "tags": ["launch"]},
]


def _schema(http: httpx.Client) -> dict[str, Any]:
    answer = http.get("/v1/records/schema")
    assert answer.status_code == 200, answer.text
    return {
        s["label"]: (s["records"], {(p["name"], p["kind"]): p["records"] for p in s["properties"]})
        for s in answer.json()["labels"]
    }


def _write(http: httpx.Client, label: str, data: list[dict[str, Any]]) -> list[str]:
    answer = http.post("/v1/records", json={"label": label, "data": data})
    assert answer.status_code == 201, answer.text
    return [r["id"] for r in answer.json()["records"]]


def test_the_schema_counts_the_records_holding_each_property_of_the_scope(server: LiveServer) -> None:
    with server.client(server.key(**THEIRS)) as theirs:  # another agent's scope, same label, other properties
        _write(theirs, "TASK", [{"title": "Theirs", "owner": "erin", "points": 8}])
    with server.client(server.key(**MINE)) as mine:
        assert _schema(mine) == {}
        ids = _write(mine, "TASK", TASKS)
        _write(mine, "PERSON", [{"name": "Alice", "age": 41}])
        assert _schema(mine) == {
            "TASK": (
                3,
                {
                    ("title", "string"): 3,
                    ("tags", "string"): 2,  # two values of one record count it once
                    ("points", "number"): 2,
                    ("done", "boolean"): 1,
                },
            ),
            "PERSON": (1, {("name", "string"): 1, ("age", "number"): 1}),
        }
        assert mine.delete(f"/v1/records/{ids[1]}").status_code == 200
        assert _schema(mine)["TASK"] == (2, {("title", "string"): 2, ("tags", "string"): 2, ("points", "number"): 1})
        patch = {"properties": {"tags": None, "points": "three"}}  # one property removed, one of another kind
        assert mine.patch(f"/v1/records/{ids[0]}", json=patch).status_code == 200
        assert _schema(mine)["TASK"] == (2, {("title", "string"): 2, ("tags", "string"): 1, ("points", "string"): 1})
    with server.client(server.key(**THEIRS)) as theirs:  # the positive control: theirs is there, in their scope
        assert _schema(theirs) == {
            "TASK": (1, {("title", "string"): 1, ("owner", "string"): 1, ("points", "number"): 1})
        }


def test_an_imported_value_carries_its_records_label_whatever_the_file_says(store: Store) -> None:
    """The schema counts by the label each value carries; an import took it from the file's value row, so
    a hand-edited or spliced file could count a record's property under another label (a review's script)."""
    tenant = store.tenant("acme", create=True)
    record = {
        "record_id": "r1",
        "scope_key": "K",
        "agent_id": "a",
        "profile_id": "p",
        "privacy_scope": "private",
        "participant_scope_hash": "h",
        "sandbox_eligible": False,
        "label": "TASK",
        "properties_json": '{"title":"x"}',
        "merge_key": None,
        "merge_identity": None,
        "origin": "stated",
        "version": 1,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }
    value: dict[str, Any] = {"record_id": "r1", "scope_key": "K", "label": "PERSON", "name": "title", "kind": "string"}
    value |= {"text_key": "x", "text_value": "x", "text_fold": "x", "number_value": None}
    tenant.import_rows([("records", record), ("record_values", value)])
    assert tenant.schema_summary("K") == [("TASK", 1, [("title", "string", 1)])]
