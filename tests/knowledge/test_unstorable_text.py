"""Text no store can hold, on both backends: a NUL (PostgreSQL's text refuses it) is taken out of
a record's strings as it is out of memory text; a lone surrogate (no Unicode text) is refused with
422 naming its place. Relationship properties hold what record properties hold. Each used to
answer 500 on one backend or the other."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import LiveServer

JSON = {"content-type": "application/json"}


def _post(http: httpx.Client, path: str, raw: str) -> httpx.Response:
    """POST a body exactly as written: ``\\ud800`` stays an escape a JSON parser turns into a lone surrogate."""
    return http.post(path, content=raw.encode(), headers=JSON)


def _refused(answer: httpx.Response, field: str) -> None:
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field and answer.json()["message"].startswith(field), answer.json()


def test_a_records_nul_is_taken_out_and_a_lone_surrogate_refused(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        written = _post(http, "/v1/records", '{"label": "NOTE", "data": {"title": "a\\u0000b", "tags": ["x\\u0000"]}}')
        assert written.status_code == 201, written.text
        assert written.json()["records"][0]["properties"] == {"title": "ab", "tags": ["x"]}
        found = _post(http, "/v1/records/search", '{"where": {"title": "a\\u0000b", "tags": {"$contains": "x"}}}')
        assert found.status_code == 200 and [r["properties"]["title"] for r in found.json()["records"]] == ["ab"]
        _refused(_post(http, "/v1/records", '{"label": "NOTE", "data": {"title": "\\ud800"}}'), "data.title")
        _refused(_post(http, "/v1/records", '{"label": "NOTE", "data": {"tags": ["ok", "\\udfff"]}}'), "data.tags")
        _refused(
            _post(http, "/v1/records/search", '{"where": {"title": {"$startsWith": "\\ud800"}}}'),
            "where.title.$startsWith",
        )
        assert http.post("/v1/records/search", json={"count": True}).json()["total"] == 1  # nothing half-written
        # Issue 30: an aggregate's alias with a lone surrogate was answered back as U+FFFD.
        _refused(_post(http, "/v1/records/search", '{"aggregate": {"\\ud800": {"fn": "count"}}}'), "aggregate")
        counted = _post(http, "/v1/records/search", '{"aggregate": {"n\\u00e9": {"fn": "count"}}}')  # control
        assert counted.status_code == 200 and counted.json()["aggregates"][0]["values"] == {"né": 1}, counted.text


def test_relationship_properties_hold_what_record_properties_hold(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        ids = [
            r["id"]
            for r in http.post("/v1/records", json={"label": "NOTE", "data": [{"n": 1}, {"n": 2}]}).json()["records"]
        ]

        def link(properties: str) -> httpx.Response:
            return _post(
                http,
                "/v1/relationships",
                f'{{"source": "{ids[0]}", "target": "{ids[1]}", "type": "CITES", "properties": {properties}}}',
            )

        _refused(link('{"note": {"deep": [1]}}'), "properties.note")
        _refused(link('{"weight": 1e400}'), "properties.weight")  # was stored as null
        _refused(link('{"note": "\\ud800"}'), "properties.note")
        assert _relationships(http, ids[0]) == []
        made = link('{"note": "a\\u0000b", "weight": 2, "tags": ["x"]}')  # the positive control
        assert made.status_code == 200, made.text
        assert _relationships(http, ids[0]) == [{"note": "ab", "weight": 2, "tags": ["x"]}]


def test_an_id_holding_a_nul_names_nothing(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        record = http.post("/v1/records", json={"label": "NOTE", "data": {"n": 1}}).json()["records"][0]["id"]
        _refused(
            http.post("/v1/relationships", json={"source": record, "target": "ab\x00", "type": "CITES"}), "target.id"
        )
        _refused(
            http.post(
                "/v1/relationships",
                json={"source": {"id": "e\x00", "kind": "EPISODE"}, "target": record, "type": "CITES"},
            ),
            "source.id",
        )
        assert http.post("/v1/relationships", json={"source": record, "target": record, "type": "CITES"}).is_success


def _relationships(http: httpx.Client, record: str) -> list[dict[str, Any]]:
    answer = http.get("/v1/relationships", params={"id": record, "direction": "out"})
    assert answer.status_code == 200, answer.text
    return [r["properties"] for r in answer.json()["relationships"]]
