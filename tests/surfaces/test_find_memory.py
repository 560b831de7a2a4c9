"""``GET /v1/memories/{id}``: a memory by id alone, in whichever scope the key may name holds it
(issue 31: Mem0's get, update, delete and history name no user), on both backends."""

from __future__ import annotations

from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body, participant, scope_fields


def test_a_memory_is_found_by_id_in_any_scope_the_key_may_name_and_nowhere_else(server: LiveServer) -> None:
    host = server.key(role="host", agentId="coder", profileId="default")
    other_agent = server.key(agentId="writer", **{k: v for k, v in scope_fields().items() if k != "agentId"})
    with server.client(host) as http, server.client(other_agent) as writer:
        alice = http.post("/v1/facts", json=fact_body("Alice likes tea.", scope=scope_fields())).json()["id"]
        bob = http.post(
            "/v1/facts", json=fact_body("Bob likes tea.", scope=scope_fields(participantScopeHash=participant("bob")))
        ).json()["id"]
        hidden = writer.post("/v1/facts", json=fact_body("Alice writes novels.")).json()["id"]
        # The positive control: each user's fact, found without naming the user, with its scope.
        for fact_id, who in ((alice, "alice"), (bob, "bob")):
            found = http.get(f"/v1/memories/{fact_id}")
            assert found.status_code == 200, found.text
            assert found.json()["id"] == fact_id and found.json()["event"]["participantScopeHash"] == participant(who)
        # Another agent's fact is in no scope this host key may name: not found, as an unknown id.
        assert writer.get(f"/v1/memories/{hidden}").status_code == 200
        assert http.get(f"/v1/memories/{hidden}").status_code == 404
        assert http.get(f"/v1/memories/{'0' * 64}").status_code == 404
        # A named scope field narrows the search.
        narrowed = http.get(f"/v1/memories/{alice}", params={"participantScopeHash": participant("bob")})
        assert narrowed.status_code == 404


def test_an_id_two_scopes_hold_is_refused_until_the_scope_is_named(server: LiveServer) -> None:
    host = server.key(role="host", agentId="coder", profileId="default")
    with server.client(host) as http:
        # An episode's id leaves the participant out: the same turn of two users has one id.
        ids = {
            http.post(
                "/v1/episodes", json=episode_body(scope=scope_fields(participantScopeHash=participant(who)))
            ).json()["id"]
            for who in ("alice", "bob")
        }
        [episode_id] = ids
        both = http.get(f"/v1/memories/{episode_id}")
        assert both.status_code == 409 and both.json()["field"] == "scope"
        one = http.get(f"/v1/memories/{episode_id}", params={"participantScopeHash": participant("bob")})
        assert one.status_code == 200 and one.json()["source"] == "EPISODE"
        assert one.json()["event"]["participantScopeHash"] == participant("bob")
