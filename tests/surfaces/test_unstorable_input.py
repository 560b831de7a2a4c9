"""Text no store can hold, on both backends, answers 422 naming where it was: a NUL in a path or
query value (PostgreSQL's text refuses one; it answered 500 there), a lone surrogate in an episode
or fact (no Unicode text; it answered 500 on both). Bodies still have their NULs taken out."""

from __future__ import annotations

import json

import httpx

from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body

JSON = {"content-type": "application/json"}


def _refused(answer: httpx.Response, field: str) -> None:
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field and answer.json()["message"].startswith(field), answer.json()


def test_a_nul_in_a_path_or_query_value_is_refused_naming_it(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        written = http.post("/v1/episodes", json=episode_body("The user likes green tea."))
        assert written.status_code == 201
        event = written.json()["id"]
        _refused(http.get(f"/v1/episodes/{event[:10]}%00{event[10:]}"), "event_id")
        _refused(http.get("/v1/facts", params={"subjectKey": "us\x00er"}), "subjectKey")
        _refused(http.get("/v1/records/ab%00cd"), "record_id")
        _refused(http.get("/v1/relationships", params={"id": "ab\x00", "kind": "EPISODE"}), "id")
        assert http.get(f"/v1/episodes/{event}").status_code == 200  # the positive controls
        assert http.get("/v1/facts", params={"subjectKey": "user"}).status_code == 200


def test_a_lone_surrogate_in_an_episode_or_fact_is_refused_naming_the_field(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        episode = json.dumps(episode_body("Use \ud800 TypeScript.", summary="A plain summary.")).encode()
        assert b"\\ud800" in episode  # the escape, as a client's JSON carries it
        _refused(http.post("/v1/episodes", content=episode, headers=JSON), "userText")
        fact = json.dumps(fact_body("The user drinks \udfff tea.")).encode()
        _refused(http.post("/v1/facts", content=fact, headers=JSON), "text")
        assert http.get("/v1/episodes").json()["episodes"] == []  # nothing half-written
        fine = json.dumps(episode_body("Use \x00TypeScript.")).encode()  # a NUL is taken out, as before
        stored = http.post("/v1/episodes", content=fine, headers=JSON)
        assert stored.status_code == 201, stored.text
        assert http.get("/v1/episodes").json()["episodes"][0]["event"]["userText"] == "Use TypeScript."


def test_a_problem_quoting_a_lone_surrogate_is_still_json(server: LiveServer) -> None:
    """A 422 whose field or message quotes a lone surrogate the client sent (a where's key, a nested
    record's key) could not be encoded as UTF-8 and became a 500. It is quoted as U+FFFD: a strict
    JSON parser refuses the escape of a lone surrogate too."""
    with server.client(server.key()) as http:
        for path, raw, field in (
            ("/v1/records/search", '{"where": {"\\ud800": 1}}', "where.\ufffd"),
            ("/v1/records", '{"label": "NOTE", "data": {"\\udfff": {}}}', "data.\ufffd"),
        ):
            answer = http.post(path, content=raw.encode(), headers=JSON)
            assert answer.status_code == 422, answer.text
            assert answer.headers["content-type"].startswith("application/json")
            assert answer.json()["field"] == field
        named = http.post("/v1/records/search", json={"where": {"Bad Name": 1}})  # the positive control
        assert named.status_code == 422 and named.json()["field"] == "where.Bad Name"
