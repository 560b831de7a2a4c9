"""Error bodies through the real server: every refusal is ``{code, message, field}`` and names
what was wrong, whichever layer (routing, JSON parsing, validation, the service) refused it."""

from __future__ import annotations

import time

import httpx

from tests.conftest import LiveServer
from tests.factories import fact_body, scope_fields


def test_a_body_field_named_query_is_named_query(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        for body in ({}, {"query": 5}, {"query": ""}, {"query": " \t\n"}):
            refused = http.post("/v1/recall", json=body)
            assert refused.status_code == 422, (body, refused.text)
            problem = refused.json()
            assert (problem["code"], problem["field"]) == ("invalid_input", "query"), (body, problem)
            assert problem["message"].startswith("query: ")
        assert http.post("/v1/recall", json={"query": "x"}).status_code == 200  # positive control


def test_query_string_errors_still_name_their_parameter(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        for path, params, field in (
            ("/v1/facts", {"limit": 0}, "limit"),
            ("/v1/facts", {"asOf": "yesterday"}, "asOf"),
            ("/v1/facts", {"privacyScope": "public"}, "privacyScope"),
        ):
            refused = http.get(path, params=params)
            assert refused.status_code == 422, (params, refused.text)
            assert refused.json()["field"] == field, refused.json()
        assert http.get("/v1/facts", params={"limit": 1}).status_code == 200  # positive control
    with server.client(server.key(role="reviewer")) as http:
        refused = http.get("/v1/audit", params={"after": -1})
        assert refused.status_code == 422 and refused.json()["field"] == "after"
        assert http.get("/v1/audit", params={"after": 0}).status_code == 200


def test_malformed_json_names_the_body_and_says_why(server: LiveServer) -> None:
    headers = {"content-type": "application/json"}
    with server.client(server.key()) as http:
        for path in ("/v1/recall", "/v1/facts", "/v1/episodes"):
            refused = http.post(path, content=b'{"query":', headers=headers)
            assert refused.status_code == 422, (path, refused.text)
            problem = refused.json()
            assert (problem["code"], problem["field"]) == ("invalid_input", "body"), problem
            assert problem["message"].startswith("body: malformed JSON at character 9"), problem
        well_formed = http.post("/v1/recall", content=b'{"query": "x"}', headers=headers)
        assert well_formed.status_code == 200  # positive control


def test_a_body_json_cannot_read_names_the_body_and_says_why(server: LiveServer) -> None:
    """Bytes that are not UTF-8, JSON nested past the parser's depth and an integer too long to convert were a
    400 with no field."""
    headers = {"content-type": "application/json"}
    unreadable = {
        '{"query": "caf\xe9"}'.encode("latin-1"): "body: the bytes are not valid UTF-8",
        b"[" * 100_000 + b"]" * 100_000: "body: JSON nested too deeply to read",
        b'{"query": "x", "scope": ' + b'{"a": ' * 5_000 + b"1" + b"}" * 5_001: "body: JSON nested too deeply to read",
        b'{"query": "x", "limit": ' + b"1" * 5_000 + b"}": "body: JSON that cannot be read: Exceeds the limit",
    }
    with server.client(server.key()) as http:
        for content, message in unreadable.items():
            for path in ("/v1/recall", "/v1/episodes"):
                refused = http.post(path, content=content, headers=headers)
                assert refused.status_code == 422, (path, refused.text)
                problem = refused.json()
                assert (problem["code"], problem["field"]) == ("invalid_input", "body"), problem
                assert problem["message"].startswith(message), problem
        read = http.post("/v1/recall", content='{"query": "café"}'.encode(), headers=headers)
        assert read.status_code == 200, read.text  # positive control: the same text as UTF-8


def test_unknown_routes_and_methods_answer_in_the_same_shape(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        missing = http.get("/v1/nope")
        assert missing.status_code == 404
        assert missing.json() == {
            "code": "not_found",
            "message": missing.json()["message"],
            "requestId": missing.headers["x-request-id"],
        }
        assert "GET /v1/nope" in missing.json()["message"]
        wrong_method = http.delete("/v1/recall")
        assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "OPTIONS, POST"
        assert wrong_method.json()["code"] == "method_not_allowed"
        assert wrong_method.json()["message"] == "/v1/recall does not take DELETE; it takes OPTIONS, POST"
        # Positive controls: the routes themselves answer, and a missing memory is still a 404
        # of the service (with its own message), not of the router.
        assert http.post("/v1/recall", json={"query": "x"}).status_code == 200
        absent = http.get(f"/v1/facts/{'0' * 64}")
        assert absent.status_code == 404 and absent.json()["message"] == f"no fact {'0' * 64} in this scope"
        assert http.post("/mcp", json={}).status_code != 404  # the MCP endpoint is still routed


def test_a_path_names_every_method_its_routes_take(server: LiveServer) -> None:
    # Issue 30: OPTIONS /v1/facts said Allow: POST (GET lists facts), and HEAD of a GET route was 405.
    every = "GET, HEAD, OPTIONS, POST"
    with server.client(server.key()) as http:
        options = http.options("/v1/facts")
        assert (options.status_code, options.headers["allow"], options.content) == (204, every, b"")
        wrong = http.delete("/v1/facts")
        assert wrong.status_code == 405 and wrong.headers["allow"] == every
        assert wrong.json()["message"] == f"/v1/facts does not take DELETE; it takes {every}"
        http.post("/v1/facts", json=fact_body("The user likes tea"))
        deadline = time.monotonic() + 30  # the body is stable once embedded (pending, then ready)
        while http.get("/v1/facts").json()["facts"][0]["embedding"]["state"] != "ready":
            assert time.monotonic() < deadline, "the fact was never embedded"
            time.sleep(0.05)
        got, head = http.get("/v1/facts"), http.head("/v1/facts")
        assert got.status_code == head.status_code == 200 and head.content == b"" and got.json()["facts"]
        assert head.headers["content-type"] == got.headers["content-type"] == "application/json"
        assert head.headers["content-length"] == got.headers["content-length"]  # the GET's, without its body
        one = http.options(f"/v1/facts/{'0' * 64}")  # a path with a parameter: its own routes
        assert one.headers["allow"] == "DELETE, GET, HEAD, OPTIONS"
        assert http.options("/v1/nope").status_code == 404  # control: an unknown path takes nothing
    assert httpx.head(f"{server.url}/v1/facts").status_code == 401  # a HEAD needs the key a GET needs


def test_refusals_by_role_name_the_action_in_english(server: LiveServer) -> None:
    tombstone = _a_tombstone(server)
    refusals = [  # (role, method, path, body, the action the message names)
        ("agent", "PUT", "/v1/policy", {}, "change the policy"),
        ("agent", "GET", "/v1/review", None, "read the review queue"),
        ("agent", "GET", "/v1/audit", None, "read the audit log"),
        ("agent", "GET", "/v1/keys", None, "manage keys"),
        ("host", "POST", "/v1/keys", {"role": "reviewer"}, "manage keys"),
        ("agent", "POST", f"/v1/review/{'0' * 64}/approve", {}, "decide reviews"),
        ("agent", "POST", f"/v1/tombstones/{tombstone}/lift", {"reason": "r"}, "lift tombstones"),
        ("reviewer", "POST", "/v1/recall", {"query": "x", "scope": scope_fields()}, None),  # allowed
        ("reviewer", "POST", "/v1/facts", fact_body(scope=scope_fields()), "write memories"),
    ]
    for role, method, path, body, action in refusals:
        grant = {"agentId": "coder", "profileId": "default"} if role == "host" else {}
        with server.client(server.key(role=role, **grant)) as http:
            answer = http.request(method, path, json=body)
        if action is None:
            assert answer.status_code == 200, answer.text
            continue
        assert answer.status_code == 403, (path, answer.text)
        assert answer.json()["code"] == "forbidden"
        assert answer.json()["message"] == f"{role} keys may not {action}", answer.json()
    # Positive controls: the roles those actions belong to are let through.
    with server.client(server.key(role="admin")) as admin:
        assert admin.put("/v1/policy", json={}).status_code == 200
        assert admin.get("/v1/keys").status_code == 200
    with server.client(server.key(role="reviewer")) as reviewer:
        assert reviewer.get("/v1/review").status_code == 200
        assert reviewer.get("/v1/audit").status_code == 200
        assert reviewer.post(f"/v1/tombstones/{tombstone}/lift", json={"reason": "r"}).status_code == 200


def _a_tombstone(server: LiveServer) -> str:
    """The id of a tombstone of the agent's scope (a retracted fact leaves one)."""
    with server.client(server.key()) as http:
        fact = http.post("/v1/facts", json=fact_body("Retract me")).json()
        assert http.post(f"/v1/facts/{fact['id']}/retract", json={"reason": "r"}).status_code == 200
        return str(http.get("/v1/tombstones").json()["tombstones"][0]["tombstoneId"])


def test_a_lone_surrogate_quoted_back_becomes_a_replacement_character(server: LiveServer) -> None:
    """A property name holding a lone surrogate was echoed in `field` as the escape \\ud800, which strict
    JSON parsers (serde_json, say) refuse even escaped."""
    headers = {"content-type": "application/json"}
    with server.client(server.key()) as http:
        refused = http.post("/v1/records", content=b'{"label": "NOTE", "data": {"\\ud800 lone": 1}}', headers=headers)
        assert refused.status_code == 422, refused.text
        quoted = "".join(str(v) for v in refused.json().values())
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in quoted), refused.text  # no surrogate, escaped or not
        assert refused.json()["field"] == "data.\ufffd lone", refused.text
        named = http.post("/v1/records", content=b'{"label": "NOTE", "data": {"Bad name": 1}}', headers=headers)
        assert named.json()["field"] == "data.Bad name"  # the control: a field is still named as sent
