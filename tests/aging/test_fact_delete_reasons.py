"""Deleting a fact takes the reasons given about it with it, tombstones' reasons included.

The slot's tombstones stay, so a value corrected or retracted away still cannot come back; but the
reasons given for them (free text a person wrote about the fact, such as why it was corrected) were
kept in the tombstones and in their audit entries after the fact was deleted "without a trace".
"""

from __future__ import annotations

import json

from tests.conftest import LiveServer
from tests.factories import fact_body

MARK = "QXREASON"


def test_a_deleted_facts_tombstones_stay_without_their_reasons(server: LiveServer) -> None:
    with server.client(server.key()) as http, server.client(server.key(role="reviewer")) as reviewer:
        written = http.post("/v1/facts", json=fact_body("I prefer MongoDB.", subject="user", kind="database"))
        assert written.status_code == 201, written.text
        old = written.json()["id"]
        fixed = http.post(f"/v1/facts/{old}/correct", json={"text": "I prefer PostgreSQL.", "reason": f"{MARK} one"})
        assert fixed.status_code == 201, fixed.text
        new = fixed.json()["memory"]["id"]
        retracted = http.post(f"/v1/facts/{new}/retract", json={"reason": f"{MARK} two"})
        assert retracted.status_code == 200, retracted.text
        # Another fact's correction: its reason is no part of the deletion (the control).
        other = http.post("/v1/facts", json=fact_body("I live in Oslo.", subject="user", kind="city")).json()["id"]
        assert http.post(f"/v1/facts/{other}/correct", json={"text": "I live in Rome.", "reason": "kept"}).is_success

        # The old value said again is refused: its refusal names the tombstone, and must not copy its reason.
        again_body = fact_body("I prefer MongoDB.", subject="user", kind="database", sourceEventId="turn-9")
        said_again = http.post("/v1/facts", json=again_body)
        assert said_again.status_code == 409, said_again.text
        listed = {"subjectKey": "user", "kind": "database"}
        before = http.get("/v1/tombstones", params=listed).json()["tombstones"]
        assert sorted(t["reason"] for t in before) == [f"{MARK} one", f"{MARK} two"]  # the positive control
        assert MARK in reviewer.get("/v1/audit", params={"limit": 500}).text

        deleted = http.delete(f"/v1/facts/{new}")
        assert deleted.status_code == 200 and sorted(deleted.json()["memories"]) == sorted([old, new])

        after = http.get("/v1/tombstones", params=listed).json()["tombstones"]
        assert {t["tombstoneId"] for t in after} == {t["tombstoneId"] for t in before}  # the tombstones stay
        assert [t["reason"] for t in after] == [None, None]
        entries = reviewer.get("/v1/audit", params={"limit": 500}).json()["entries"]
        assert MARK not in json.dumps(entries)
        assert "kept" in [e["reason"] for e in entries]  # another fact's reasons are untouched
        verdict = reviewer.get("/v1/audit/verify").json()
        assert verdict["verified"] and verdict["checked"] == len(entries), verdict  # the chain still holds
        again = http.post("/v1/facts", json=fact_body("I prefer MongoDB.", subject="user", kind="database"))
        assert again.status_code == 409, again.text  # the old value still cannot come back
