"""What clients of the earlier wire rely on still holds, beside what the registry changed."""

from __future__ import annotations

from engramdb.api.mcp.tools import _parameter
from engramdb.models.operations import BY_NAME
from tests.conftest import LiveServer
from tests.factories import fact_body


def test_a_retried_correction_answers_the_one_stored(live: LiveServer) -> None:
    with live.client(live.key()) as agent:
        old = agent.post("/v1/facts", json=fact_body("Uses MongoDB", kind="db")).json()
        body = {"text": "Uses PostgreSQL", "reason": "moved"}
        first = agent.post(f"/v1/facts/{old['id']}/correct", json=body)
        retry = agent.post(f"/v1/facts/{old['id']}/correct", json=body)
        assert (first.status_code, retry.status_code) == (201, 200), retry.text
        assert retry.json()["outcome"] == "exists" and retry.json()["id"] == first.json()["id"]
        other = agent.post(f"/v1/facts/{old['id']}/correct", json={"text": "Uses SQLite", "reason": "no"})
        assert other.status_code == 409 and other.json()["status"] == "superseded"  # a new one is refused


def test_unknown_query_parameters_are_ignored(live: LiveServer) -> None:
    with live.client(live.key()) as agent:
        for path in ("/v1/facts", "/v1/episodes", "/v1/tombstones"):
            assert agent.get(path, params={"_": "1"}).status_code == 200, path
        assert agent.get("/v1/facts", params={"limit": "0"}).status_code == 422  # a known one is still checked


def test_lifting_a_lifted_tombstone_answers_a_documented_409(live: LiveServer) -> None:
    agent, admin = live.client(live.key()), live.client(live.key(role="admin"))
    with agent, admin:
        old = agent.post("/v1/facts", json=fact_body("Uses MongoDB", kind="db")).json()
        agent.post(f"/v1/facts/{old['id']}/correct", json={"text": "Uses PostgreSQL", "reason": "moved"})
        tomb = agent.get("/v1/tombstones").json()["tombstones"][0]["tombstoneId"]
        assert admin.post(f"/v1/tombstones/{tomb}/lift", json={"reason": "ok"}).status_code == 200
        again = admin.post(f"/v1/tombstones/{tomb}/lift", json={"reason": "ok"})
        documented = admin.get("/openapi.json").json()["paths"]["/v1/tombstones/{tombstone_id}/lift"]["post"]
        assert again.status_code == 409 and "409" in documented["responses"]


def test_mcp_tools_declare_the_contracts_length_limits() -> None:
    spec = BY_NAME["write_fact"].mcp
    assert spec is not None
    args = dict(spec.args)
    for name, cap in (("text", 4000), ("subject", 256), ("kind", 64)):
        assert f"max_length={cap}" in repr(_parameter(BY_NAME["write_fact"], name, args[name]).annotation), name
