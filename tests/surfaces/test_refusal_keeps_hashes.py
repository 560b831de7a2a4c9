"""A scope refusal names the field, and the value asked for, but never a participant's hash."""

from __future__ import annotations

from tests.conftest import LiveServer

BOUND = {"agentId": "coder", "profileId": "default"}


def test_a_refusal_does_not_repeat_a_participants_hash(server: LiveServer) -> None:
    """A key bound to one participant, naming another by userId, was told that user's salted hash in
    the 403: any key could have the server hash any user id with the tenant's secret salt."""
    named = {"agentId": "coder", "profileId": "default", "privacyScope": "private", "sandboxEligible": False}
    with server.client(server.key(role="host", **BOUND)) as host:  # a host key resolves users: its work
        bob = host.post("/v1/scope/resolve", json={**named, "userId": "bob"}).json()["scope"]["participantScopeHash"]
        alice = host.post("/v1/scope/resolve", json={**named, "userId": "alice"}).json()["scope"]
    with server.client(server.key(**alice)) as agent:  # an agent key bound to alice's scope
        refused = agent.post("/v1/scope/resolve", json={**named, "userId": "bob"})
        assert refused.status_code == 403 and refused.json()["field"] == "participantScopeHash", refused.text
        assert bob not in refused.text and bob[:12] not in refused.text
        other_agent = agent.post("/v1/scope/resolve", json={**named, "agentId": "writer"})
        assert other_agent.status_code == 403 and "agentId='writer'" in other_agent.text  # other values still named
