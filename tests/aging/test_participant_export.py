"""Access and portability: one participant's data as the export lines `engram import` reads, over
REST and the CLI, on both backends; nothing of another participant; admin keys only."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import engram
from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body, participant, scope_fields

BOB = scope_fields(participantScopeHash=participant("bob"))


def test_one_participants_data_exports_and_imports(server: LiveServer, tmp_path: Path) -> None:
    alice_hash = scope_fields()["participantScopeHash"]
    with server.client(server.key()) as alice, server.client(server.key(**BOB)) as bob:
        old = alice.post("/v1/facts", json=fact_body("Alice lives in Lyon", kind="city")).json()["id"]
        alice.post(f"/v1/facts/{old}/correct", json={"text": "Alice lives in Nantes", "reason": "moved"})
        alice.post("/v1/episodes", json=episode_body("Alice's turn"))
        alice.post("/v1/records", json={"label": "TASK", "data": {"title": "Alice's task"}})
        bob.post("/v1/episodes", json=episode_body("Bob's turn"))
        assert alice.get("/v1/export", params={"participantScopeHash": alice_hash}).status_code == 403
    with server.client(server.key(role="admin")) as admin:
        exported = admin.get("/v1/export", params={"participantScopeHash": alice_hash}).json()
        refused = admin.get("/v1/export", params={"participantScopeHash": "alice"})
        assert refused.status_code == 422 and refused.json()["field"] == "participantScopeHash"
    tables = [line["table"] for line in exported["rows"]]
    assert tables.count("memories") == 3 and tables.count("tombstones") == 1 and tables.count("records") == 1
    assert "audit_log" not in tables and "api_keys" not in tables
    text = json.dumps(exported)
    assert "Alice lives in Nantes" in text and "Bob's turn" not in text  # and not a line of Bob's

    out = tmp_path / "alice.jsonl"
    env = server.cli_env()
    command = ["export", "--tenant", "t1", "--participant", alice_hash, "--out", str(out)]
    done = engram(*command, env=env)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["format"] == "engramdb-export" and [x["table"] for x in lines[1:]] == tables
    loaded = engram("import", "--in", str(out), "--tenant", "t2", env=env)
    assert loaded.returncode == 0, loaded.stderr
    assert "3 memories" in loaded.stdout and "1 records" in loaded.stdout, loaded.stdout
