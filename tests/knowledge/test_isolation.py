"""No record and no relationship crosses a scope or a tenant, over REST, on both backends.

Six neighbours each differ from "mine" in exactly one way (each of the five scope fields, and
the tenant) and hold the same graph under the same labels and mergeBy values. Every read and
write an agent key can make is tried against them; each refusal has its positive control, the
same call on the agent's own records.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer
from tests.factories import participant, scope_fields

MINE = scope_fields()
NEIGHBOURS: dict[str, tuple[str, dict[str, Any]]] = {
    "agentId": ("t1", scope_fields(agentId="reviewer-bot")),
    "profileId": ("t1", scope_fields(profileId="work")),
    "privacyScope": ("t1", scope_fields(privacyScope="shared")),
    "participantScopeHash": ("t1", scope_fields(participantScopeHash=participant("bob"))),
    "sandboxEligible": ("t1", scope_fields(sandboxEligible=True)),
    "tenant": ("t2", MINE),
}
GRAPH = {
    "label": "SESSION",
    "mergeBy": ["title"],
    "data": {
        "title": "Billing kickoff",
        "DECISION": [{"title": "Use TypeScript for billing"}],
        "TASK": [{"title": "Write the invoice migration", "status": "open"}],
    },
}


def _write(http: httpx.Client) -> dict[str, str]:
    answer = http.post("/v1/records", json=GRAPH)
    assert answer.status_code == 201, answer.text
    found = http.post("/v1/records/search", json={"limit": 10}).json()["records"]
    ids = {r["label"]: r["id"] for r in found}
    entity = http.post("/v1/records", json={"label": "ENTITY", "data": {"name": "Alice"}}).json()["records"][0]["id"]
    link = {"source": ids["TASK"], "target": entity, "type": "MENTIONS"}
    assert http.post("/v1/relationships", json=link).status_code == 200
    return {**ids, "ENTITY": entity}


World = tuple[httpx.Client, dict[str, str], dict[str, dict[str, str]]]


@pytest.fixture
def world(server: LiveServer) -> Iterator[World]:
    theirs = {}
    for name, (tenant, scope) in NEIGHBOURS.items():
        with server.client(server.key(tenant=tenant, **scope)) as http:
            theirs[name] = _write(http)
    with server.client(server.key(**MINE)) as mine:
        yield mine, _write(mine), theirs


def test_searches_see_only_their_own_scope(world: World) -> None:
    mine, own, _theirs = world
    found = {r["id"] for r in mine.post("/v1/records/search", json={"limit": 1000}).json()["records"]}
    assert found == set(own.values())  # the positive control and the refusal at once
    where = {"labels": ["TASK"], "where": {"SESSION": {"title": "Billing kickoff"}, "ENTITY": {"name": "Alice"}}}
    assert [r["id"] for r in mine.post("/v1/records/search", json=where).json()["records"]] == [own["TASK"]]
    counted = {**where, "aggregate": {"n": {"fn": "count"}}}
    assert mine.post("/v1/records/search", json=counted).json()["aggregates"][0]["values"] == {"n": 1}
    schema = {s["label"]: s["records"] for s in mine.get("/v1/records/schema").json()["labels"]}
    assert schema == {"DECISION": 1, "ENTITY": 1, "SESSION": 1, "TASK": 1}
    exported = mine.post("/v1/records/export", json={"depth": 3}).json()
    assert {r["id"] for r in exported["records"]} == set(own.values()) and len(exported["relationships"]) == 3
    preview = mine.post("/v1/records/delete", json={"dryRun": True}).json()
    assert set(preview["records"]) == set(own.values())


def test_other_scopes_records_are_not_found(world: World) -> None:
    mine, own, theirs = world
    for name, ids in theirs.items():
        other = ids["TASK"]
        assert mine.get(f"/v1/records/{own['TASK']}").status_code == 200  # control
        for method, path, body in (
            ("GET", f"/v1/records/{other}", None),
            ("GET", f"/v1/records/{other}/history", None),
            ("PATCH", f"/v1/records/{other}", {"properties": {"status": "x"}}),
            ("DELETE", f"/v1/records/{other}", None),
        ):
            answer = mine.request(method, path, json=body)
            assert answer.status_code == 404, (name, method, path, answer.text)
        assert mine.get("/v1/relationships", params={"id": other}).status_code == 404, name
        assert len(mine.get("/v1/relationships", params={"id": own["TASK"]}).json()["relationships"]) == 2


def test_no_relationship_reaches_another_scope(world: World) -> None:
    mine, own, theirs = world
    for name, ids in theirs.items():
        for source, target, side in ((own["TASK"], ids["ENTITY"], "target"), (ids["TASK"], own["ENTITY"], "source")):
            answer = mine.post("/v1/relationships", json={"source": source, "target": target, "type": "MENTIONS"})
            assert answer.status_code == 422, (name, answer.text)
            assert answer.json()["field"] == f"{side}.id"
        unlink = {"source": ids["TASK"], "target": ids["ENTITY"], "type": "MENTIONS"}
        assert mine.post("/v1/relationships/delete", json=unlink).status_code == 422, name
    control = {"source": own["DECISION"], "target": own["ENTITY"], "type": "MENTIONS"}
    assert mine.post("/v1/relationships", json=control).status_code == 200


def test_a_scope_the_key_does_not_hold_is_refused(server: LiveServer, world: World) -> None:
    mine, _own, _ = world
    for name, (tenant, scope) in NEIGHBOURS.items():
        if tenant != "t1":
            continue
        body = {"labels": ["TASK"], "scope": scope}
        assert mine.post("/v1/records/search", json=body).status_code == 403, name
        assert mine.post("/v1/records", json={**GRAPH, "scope": scope}).status_code == 403, name
    assert mine.post("/v1/records/search", json={"labels": ["TASK"], "scope": MINE}).status_code == 200


def test_deleting_everything_of_mine_leaves_every_neighbour_whole(server: LiveServer, world: World) -> None:
    mine, own, theirs = world
    gone = mine.post("/v1/records/delete", json={}).json()
    assert set(gone["records"]) == set(own.values()) and gone["relationships"] == 3
    assert mine.post("/v1/records/search", json={}).json()["records"] == []
    for name, (tenant, scope) in NEIGHBOURS.items():
        with server.client(server.key(tenant=tenant, **scope)) as http:
            left = {r["id"] for r in http.post("/v1/records/search", json={}).json()["records"]}
            assert left == set(theirs[name].values()), name
            assert len(http.get("/v1/relationships", params={"id": theirs[name]["TASK"]}).json()["relationships"]) == 2
