"""A review decision is taken only on a fact that waits for review, and a rejection tombstones only a
value its slot does not hold now (a hunt: an edit-and-approve naming the scope turned a rejected or
retracted fact current again, and rejecting a spam copy of a current value made that value refused)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer
from tests.factories import fact_body, scope_fields


def _write(http: httpx.Client, text: str, kind: str, *, trust: str = "trusted", source: str = "s1") -> dict[str, Any]:
    answer = http.post(
        "/v1/facts", json=fact_body(text, subject="user", kind=kind, trustClass=trust, sourceEventId=source)
    )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def _status(http: httpx.Client, fact_id: str) -> str:
    return str(http.get(f"/v1/facts/{fact_id}").json()["status"])


@pytest.mark.parametrize("decided", ["rejected", "retracted", "active"])
def test_an_edit_in_review_of_a_decided_fact_is_refused(server: LiveServer, decided: str) -> None:
    scope = {"scope": scope_fields()}
    with server.client(server.key()) as agent, server.client(server.key(role="reviewer")) as reviewer:
        fact = _write(agent, "Pet is a cat", "pet", trust="trusted" if decided == "active" else "untrusted")
        if decided == "rejected":
            assert reviewer.post(f"/v1/review/{fact['id']}/reject", json={**scope, "reason": "made up"}).is_success
        if decided == "retracted":
            assert reviewer.post(f"/v1/review/{fact['id']}/approve", json=scope).is_success
            assert agent.post(f"/v1/facts/{fact['id']}/retract", json={"reason": "the cat left"}).is_success
        edit = {**scope, "text": "Pet is a dog", "reason": "edit"}
        refused = reviewer.post(f"/v1/review/{fact['id']}/edit-and-approve", json=edit)
        assert refused.status_code == 409 and f"is {decided}, not pending review" in refused.text, refused.text
        assert _status(agent, fact["id"]) == decided  # the decision stands, recorded as it was
        current = [f["event"]["text"] for f in agent.get("/v1/facts", params={"kind": "pet"}).json()["facts"]]
        assert current == (["Pet is a cat"] if decided == "active" else [])
        pending = _write(agent, "Pet is a hamster", "pet2", trust="untrusted", source="s2")  # the control
        edited = reviewer.post(f"/v1/review/{pending['id']}/edit-and-approve", json=edit)
        assert edited.status_code == 200 and edited.json()["memory"]["event"]["text"] == "Pet is a dog", edited.text


def test_rejecting_a_copy_of_the_current_value_leaves_that_value_standing(server: LiveServer) -> None:
    with server.client(server.key()) as agent, server.client(server.key(role="reviewer")) as reviewer:
        current = _write(agent, "Shoe size 42", "shoes")
        spam = _write(agent, "Shoe size 42", "shoes", trust="untrusted", source="s2")
        other = _write(agent, "Shoe size 45", "shoes", trust="untrusted", source="s3")
        for pending in (spam, other):
            assert reviewer.post(f"/v1/review/{pending['id']}/reject", json={"reason": "spam"}).is_success
        assert _status(agent, current["id"]) == "active"
        again = agent.post(
            "/v1/facts", json=fact_body("shoe size 42.", subject="user", kind="shoes", sourceEventId="s4")
        )
        assert again.status_code in (200, 201), again.text  # the current value is stated again, not refused
        refused = agent.post(
            "/v1/facts", json=fact_body("Shoe size 45", subject="user", kind="shoes", sourceEventId="s5")
        )
        assert refused.status_code == 409 and refused.json()["reason"] == "spam"  # the control: a value not held


@pytest.mark.parametrize("hidden", ["\u200b", "\u00ad", "\u2060", "\ufeff"])
def test_an_invisible_format_character_does_not_pass_a_tombstone(server: LiveServer, hidden: str) -> None:
    with server.client(server.key()) as agent:
        _write(agent, "Lives in Paris", "home")
        _write(agent, "Lives in Berlin", "home", source="s2")  # Paris is corrected away
        spelled = agent.post(
            "/v1/facts", json=fact_body(f"Lives in Pa{hidden}ris{hidden}", subject="user", kind="home")
        )
        assert spelled.status_code == 409 and spelled.json()["field"] == "text", spelled.text
        moved = agent.post("/v1/facts", json=fact_body(f"Lives in Ro{hidden}me", subject="user", kind="home"))
        assert moved.status_code == 201, moved.text  # the control: another value, the same characters in it
