"""Text no store can keep never reaches one: a lone surrogate is refused naming its field, a NUL is
dropped as writes drop it, and neither answers a 5xx on either backend (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb.core.auth import Caller
from engramdb.core.operations import run
from engramdb.core.service import MemoryService
from engramdb.errors import InvalidInputError, NotFoundError
from engramdb.models.inputs import build_inputs
from engramdb.models.operations import OPERATIONS
from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body, scope_fields

LONE = "\ud800"
BY_NAME = {op.name: op for op in OPERATIONS}


def _post(http: httpx.Client, path: str, body: dict[str, Any]) -> httpx.Response:
    # json.dumps escapes the surrogate as "\ud800", which is what a hostile client sends.
    return http.post(path, content=json.dumps(body), headers={"content-type": "application/json"})


def _refused(answer: httpx.Response, field: str) -> None:
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["field"] == field and "surrogate" in answer.json()["message"]


@pytest.mark.parametrize("field", ["userText", "assistantText", "originClass", "provenance"])
def test_a_lone_surrogate_in_an_episode_is_refused_naming_the_field(server: LiveServer, field: str) -> None:
    with server.client(server.key()) as http:
        _refused(_post(http, "/v1/episodes", {**episode_body(), field: f"a{LONE}b"}), field)
        assert _post(http, "/v1/episodes", {**episode_body(), field: "a\u00e9b"}).status_code == 201  # control


@pytest.mark.parametrize("field", ["text", "provenance", "subjectKey", "kind"])
def test_a_lone_surrogate_in_a_fact_is_refused_naming_the_field(server: LiveServer, field: str) -> None:
    with server.client(server.key()) as http:
        _refused(_post(http, "/v1/facts", {**fact_body(), field: f"a{LONE}b"}), field)
        assert _post(http, "/v1/facts", {**fact_body(), field: "a\u00e9b"}).status_code == 201  # control


def test_a_lone_surrogate_in_a_batch_refuses_that_item_alone(server: LiveServer) -> None:
    items = [
        episode_body("first turn", turn=0),
        episode_body(f"bad {LONE} turn", turn=1),
        episode_body("third turn", turn=2),
    ]
    with server.client(server.key()) as http:
        answer = _post(http, "/v1/episodes/batch", {"episodes": items})
        assert answer.status_code == 200, answer.text
        results = answer.json()["results"]
        assert [r["status"] for r in results] == [201, 422, 201]
        assert results[1]["field"] == "userText"


# Every read or action that takes a path or query parameter a store compares with stored text.
NUL_REQUESTS: list[tuple[str, str, str, dict[str, Any] | None, dict[str, Any] | None]] = [
    ("agent", "GET", "/v1/facts/ab%00cd", None, None),
    ("agent", "GET", "/v1/facts", {"subjectKey": "a\x00b"}, None),
    ("agent", "GET", "/v1/facts", {"kind": "a\x00"}, None),
    ("agent", "GET", "/v1/facts/ab%00cd/history", None, None),
    ("agent", "POST", "/v1/facts/ab%00cd/retract", None, {"reason": "x"}),
    ("agent", "GET", "/v1/tombstones", {"subjectKey": "x\x00"}, None),
    ("agent", "GET", "/v1/episodes", {"sessionId": "s\x00"}, None),
    ("agent", "GET", "/v1/records/ab%00cd", None, None),
    ("agent", "POST", "/v1/recall", None, {"query": "x", "excludeSessionId": "a\x00b"}),
    ("admin", "DELETE", "/v1/keys/ab%00", None, None),
    ("admin", "POST", "/v1/review/ab%00/approve", None, {}),
    ("admin", "POST", "/v1/tombstones/ab%00/lift", None, {"reason": "x"}),
    ("admin", "GET", "/v1/review", {"kind": "a\x00"}, None),
]


@pytest.mark.parametrize(("role", "method", "path", "params", "body"), NUL_REQUESTS)
def test_a_nul_in_a_parameter_never_answers_5xx(
    server: LiveServer, role: str, method: str, path: str, params: dict[str, Any] | None, body: dict[str, Any] | None
) -> None:
    with server.client(server.key(role=role)) as http:
        answer = http.request(method, path, params=params, json=body)
    assert answer.status_code < 500, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    if answer.status_code >= 400:
        assert answer.json()["code"] != "internal"


def test_a_nul_in_a_filter_is_refused_and_one_in_a_write_taken_out(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        written = http.post("/v1/facts", json=fact_body(subject="build\x00tool")).json()
        assert written["memory"]["event"]["subjectKey"] == "buildtool"
        refused = http.get("/v1/facts", params={"subjectKey": "build\x00tool"})
        assert refused.status_code == 422 and refused.json()["field"] == "subjectKey", refused.text
        found = http.get("/v1/facts", params={"subjectKey": "buildtool"}).json()["facts"]  # control
        assert [f["id"] for f in found] == [written["id"]]
    # Issue 30: the docs said NULs were stripped from query strings and path values too.
    rest = " ".join((Path(__file__).resolve().parents[2] / "docs" / "rest.md").read_text(encoding="utf-8").split())
    assert "NUL characters are stripped from bodies before the id is computed; a NUL in a query string" in rest
    assert "or a path value is refused with 422 naming the parameter" in rest


def test_a_lone_surrogate_in_a_query_or_path_value_is_refused_naming_it() -> None:
    # HTTP decodes query strings as UTF-8 with replacement, so these arrive only from the SDK,
    # the CLI or MCP, which validate through the same models.
    with pytest.raises(InvalidInputError) as refused:
        build_inputs(BY_NAME["list_facts"], {"subjectKey": f"a{LONE}"})
    assert refused.value.field == "subjectKey"
    with pytest.raises(InvalidInputError) as nul:
        build_inputs(BY_NAME["list_facts"], {"subjectKey": "a\x00b"})
    assert nul.value.field == "subjectKey"
    assert build_inputs(BY_NAME["list_facts"], {"subjectKey": "ab"}).query.wire()["subjectKey"] == "ab"  # type: ignore[union-attr]


def test_a_lone_surrogate_in_a_path_value_is_refused_naming_it(service: MemoryService, operator: Caller) -> None:
    get_fact = BY_NAME["get_fact"]
    with pytest.raises(InvalidInputError) as refused:
        run(service, get_fact, operator, build_inputs(get_fact, {"fact_id": f"a{LONE}"}, scope=scope_fields()))
    assert refused.value.field == "fact_id"
    with pytest.raises(NotFoundError):  # control: the same call without the surrogate reaches the store
        run(service, get_fact, operator, build_inputs(get_fact, {"fact_id": "ab"}, scope=scope_fields()))


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/v1/review", {"olderThanSeconds": "1e11"}, "olderThanSeconds"),
        ("/v1/review", {"olderThanSeconds": "inf"}, "olderThanSeconds"),
        ("/v1/audit", {"after": "172022612090176733184"}, "after"),
    ],
)
def test_numbers_past_their_range_are_refused_naming_the_parameter(
    server: LiveServer, path: str, params: dict[str, str], field: str
) -> None:
    with server.client(server.key(role="admin")) as http:
        answer = http.get(path, params=params)
        assert answer.status_code == 422 and answer.json()["field"] == field, answer.text
        assert http.get(path).status_code == 200  # control


def test_an_empty_aggregate_is_refused_naming_it(server: LiveServer) -> None:
    """Found by the fuzz test: {"aggregate": {}} answered 500 on SQLite."""
    with server.client(server.key()) as http:
        answer = http.post("/v1/records/search", json={"aggregate": {}})
        assert answer.status_code == 422 and answer.json()["field"] == "aggregate", answer.text
        counted = http.post("/v1/records/search", json={"aggregate": {"n": {"fn": "count"}}})
        assert counted.status_code == 200, counted.text  # control: one aggregate is answered


def test_policy_ages_past_a_century_are_refused(server: LiveServer) -> None:
    """Found by the fuzz test: an aging policy of 10**20 days made the aging job answer 500."""
    with server.client(server.key(role="admin")) as http:
        policy = http.get("/v1/policy").json()
        huge = {**policy, "aging": {**policy["aging"], "archiveAfterDays": 10**20}}
        answer = http.put("/v1/policy", json=huge)
        assert answer.status_code == 422 and "archiveAfterDays" in answer.json()["field"], answer.text
        assert http.post("/v1/jobs/aging/run").status_code == 200
        fine = {**policy, "aging": {**policy["aging"], "archiveAfterDays": 36_525}}
        assert http.put("/v1/policy", json=fine).status_code == 200  # control
        assert http.post("/v1/jobs/aging/run").status_code == 200
