"""GET /v1/scopes lists what a key may name; GET /v1/audit filters; GET /v1/audit/verify names a break.

Both backends: the scope counts and the audit filters are SQL of each store.
"""

from __future__ import annotations

from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body, participant, scope_fields
from tests.surfaces.test_audit_cli import _edit

ALICE, BOB = scope_fields(), scope_fields(participantScopeHash=participant("bob"))
OTHER_AGENT = scope_fields(agentId="support")


def _fill(server: LiveServer) -> None:
    with server.client(server.key(role="admin")) as admin:
        for scope, n in ((ALICE, 3), (BOB, 1), (OTHER_AGENT, 2)):
            for i in range(n):
                written = admin.post("/v1/episodes", json=episode_body(f"turn {i}", turn=i, scope=scope))
                assert written.status_code == 201
        derived = admin.post("/v1/facts", params={"origin": "derived"}, json=fact_body("Likes tea", scope=ALICE))
        assert derived.json()["outcome"] == "parked"


def _listed(server: LiveServer, token: str) -> dict[str, tuple[int, int, int]]:
    with server.client(token) as http:
        answer = http.get("/v1/scopes")
    assert answer.status_code == 200, answer.text
    return {
        s["participantScopeHash"][:4] + s["agentId"]: (s["episodes"], s["facts"], s["pending"])
        for s in answer.json()["scopes"]
    }


def test_each_key_lists_only_the_scopes_it_may_name(server: LiveServer) -> None:
    _fill(server)
    a, b = ALICE["participantScopeHash"][:4], BOB["participantScopeHash"][:4]
    everything = {a + "coder": (3, 1, 1), b + "coder": (1, 0, 0), a + "support": (2, 0, 0)}
    assert _listed(server, server.key(role="reviewer")) == everything  # the positive control: all three
    assert _listed(server, server.key(role="agent", **ALICE)) == {a + "coder": (3, 1, 1)}
    host = server.key(role="host", agentId="coder", profileId="default")
    assert _listed(server, host) == {a + "coder": (3, 1, 1), b + "coder": (1, 0, 0)}
    with server.client(server.key(role="reviewer")) as http:
        one = http.get("/v1/scopes").json()["scopes"][0]
        by_key = http.get("/v1/scopes", params={"scopeKey": one["scopeKey"]}).json()["scopes"]
    assert by_key == [one]


def test_audit_filters_keep_only_matching_entries(server: LiveServer) -> None:
    _fill(server)
    with server.client(server.key(role="reviewer")) as http:
        everything = http.get("/v1/audit", params={"limit": 1000}).json()["entries"]
        parked = http.get("/v1/audit", params={"action": "fact.park"}).json()["entries"]
        episodes = http.get("/v1/audit", params={"action": "episode.", "limit": 2}).json()
        target = everything[3]["targetId"]
        about = http.get("/v1/audit", params={"targetId": target}).json()["entries"]
    assert {e["action"] for e in everything} >= {"episode.write", "fact.park"}  # the positive control
    assert [e["action"] for e in parked] == ["fact.park"]
    assert [e["action"] for e in episodes["entries"]] == ["episode.write"] * 2 and episodes["nextAfter"]
    assert about and {e["targetId"] for e in about} == {target}


def test_verify_names_the_first_entry_tampered_with(server: LiveServer) -> None:
    _fill(server)
    with server.client(server.key(role="reviewer")) as http:
        before = http.get("/v1/audit/verify").json()
        _edit(server.store, "UPDATE audit_log SET reason = 'nothing happened' WHERE seq = 4")
        after = http.get("/v1/audit/verify").json()
    assert before["verified"] and before["checked"] >= 8 and before["brokenSeq"] is None
    assert not after["verified"] and after["brokenSeq"] == 4 and after["checked"] == 3
    assert "edited" in after["problem"]
