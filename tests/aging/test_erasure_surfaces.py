"""Deleting and forgetting through the real server, the SDK and `engram audit verify`: who may,
what another scope learns (404, never 403: no existence oracle), and bad input named."""

from __future__ import annotations

from engramdb.sdk import Client
from tests.cli import engram
from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body, participant, scope_fields

BOB = scope_fields(participantScopeHash=participant("bob"))


def test_another_scopes_memory_is_a_404_and_stays(server: LiveServer) -> None:
    with server.client(server.key()) as alice, server.client(server.key(**BOB)) as bob:
        fact = alice.post("/v1/facts", json=fact_body("Alice lives in Lyon", kind="city")).json()["id"]
        episode = alice.post("/v1/episodes", json=episode_body("Alice's turn")).json()["id"]
        for path in (f"/v1/facts/{fact}", f"/v1/episodes/{episode}"):
            refused = bob.delete(path)
            assert refused.status_code == 404 and refused.json()["code"] == "not_found", refused.text
            assert bob.delete(path, params={"dryRun": "true"}).status_code == 404
            assert alice.get(path).status_code == 200, "a foreign delete took nothing"
        missing = alice.delete(f"/v1/facts/{'0' * 64}")
        assert missing.status_code == 404 and missing.json() == {**missing.json(), "code": "not_found"}
        assert alice.delete(f"/v1/facts/{fact}").json() == {"dryRun": False, "memories": [fact]}  # positive control
        assert alice.get(f"/v1/facts/{fact}").status_code == 404
        assert alice.delete(f"/v1/episodes/{episode}").status_code == 200
        assert alice.get(f"/v1/episodes/{episode}").status_code == 404


def test_forget_is_for_admin_keys_only_and_bad_input_is_named(server: LiveServer) -> None:
    forget = {"participantScopeHash": scope_fields()["participantScopeHash"]}
    with server.client(server.key()) as agent:
        agent.post("/v1/episodes", json=episode_body("Alice's turn"))
    grants = {"agent": scope_fields(), "host": {"agentId": "coder", "profileId": "default"}, "reviewer": {}}
    for role, grant in grants.items():
        with server.client(server.key(role=role, **grant)) as caller:
            refused = caller.post("/v1/forget", json=forget)
            assert refused.status_code == 403 and refused.json()["code"] == "forbidden", (role, refused.text)
    with server.client(server.key(role="admin")) as admin:
        for body, field in (
            ({"participantScopeHash": "ALICE"}, "participantScopeHash"),
            ({}, "participantScopeHash"),
            ({**forget, "dryRun": "maybe"}, "dryRun"),
        ):
            bad = admin.post("/v1/forget", json=body)
            assert bad.status_code == 422 and bad.json()["field"] == field, bad.text
        assert admin.post("/v1/forget", json={**forget, "dryRun": True}).json()["memories"] == 1
    with Client(server.url, server.key(role="admin")) as sdk:
        assert sdk.forget_participant(forget).memories == 1  # the SDK's method, generated from the registry
        assert sdk.forget_participant(forget).memories == 0
        entries = sdk.audit(action="participant.forget").entries
        assert [e.target_id for e in entries] == [forget["participantScopeHash"]] * 2
    verified = engram("audit", "verify", "--tenant", "t1", env=server.cli_env())
    assert verified.returncode == 0, verified.stderr
