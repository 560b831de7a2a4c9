"""The change feed's parameters as a client may get them wrong: a parameter given twice (as httpx sends
a list) was read as its last value, and a cursor past the head was taken, and either way the client's
cursor moved past changes it wanted. Both are refused, naming the parameter (both backends)."""

from __future__ import annotations

from tests.conftest import LiveServer
from tests.factories import episode_body


def test_a_repeated_parameter_and_a_cursor_past_the_head_are_refused(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        for turn in range(3):
            assert http.post("/v1/episodes", json=episode_body(f"turn {turn}", turn=turn)).status_code == 201
        whole = http.get("/v1/changes", params={"kinds": "created,deleted"}).json()
        assert len(whole["changes"]) == 3 and whole["nextAfter"] == whole["head"]  # the control
        for params, field in (
            ({"kinds": ["created", "deleted"]}, "kinds"),  # kinds=created&kinds=deleted
            ({"limit": ["1", "2"]}, "limit"),
            ({"after": str(whole["head"] + 1000)}, "after"),
        ):
            answer = http.get("/v1/changes", params=params)
            assert answer.status_code == 422 and answer.json()["field"] == field, (params, answer.text)
        assert http.get("/v1/changes", params={"after": whole["head"]}).json()["changes"] == []  # at the head: fine
        twice = http.get("/v1/facts", params=[("agentId", "coder"), ("agent_id", "coder")])  # two spellings of one
        assert twice.status_code == 422 and twice.json()["field"] == "agentId", twice.text
        assert http.get("/v1/facts", params=[("agentId", "coder")]).status_code == 200
