"""Writes the contract admits but that say nothing are refused (422 naming the field), on every
path that writes: REST, the batch endpoint, the correct and edit-and-approve endpoints, the CLI.
(MCP and the SDK: tests/mcp/test_http.py, tests/sdk/test_client.py.)"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx

from tests.cli import engram
from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body


def _stored_facts(http: httpx.Client) -> list[str]:
    """Every fact of the scope, current or not."""
    facts = http.get("/v1/facts", params={"includeHistory": "true", "limit": 1000}).json()["facts"]
    return sorted(f["event"]["text"] for f in facts)


def test_a_validity_that_ends_before_it_starts_is_refused(server: LiveServer) -> None:
    start = "2026-08-18T00:00:00Z"
    with server.client(server.key()) as http:
        for until in ("2026-08-17T23:59:59Z", start, "2026-08-18T02:00:00+02:00"):  # before, equal, equal
            refused = http.post("/v1/facts", json=fact_body("On leave", validFrom=start, validUntil=until))
            assert refused.status_code == 422, (until, refused.text)
            assert refused.json()["field"] == "validUntil", refused.json()
            assert "must be after validFrom" in refused.json()["message"]
        inactive = http.post("/v1/facts", json=fact_body("On leave", validUntil=start, active=False))
        assert inactive.status_code == 422 and inactive.json()["field"] == "validUntil"
        assert _stored_facts(http) == []  # nothing written
        # Positive controls: a window that ends later is taken, compared as instants, not as
        # text ("09:00Z" sorts before "10:00+02:00", but is an hour after it).
        later = http.post("/v1/facts", json=fact_body("On leave", validUntil="2026-08-19T00:00:00Z"))
        offset = http.post(
            "/v1/facts",
            json=fact_body(
                "Away", kind="away", validFrom="2026-08-18T10:00:00+02:00", validUntil="2026-08-18T09:00:00Z"
            ),
        )
        open_ended = http.post("/v1/facts", json=fact_body("Likes tea", kind="likes"))
        assert [r.status_code for r in (later, offset, open_ended)] == [201, 201, 201], offset.text
        assert _stored_facts(http) == ["Away", "Likes tea", "On leave"]


def test_blank_fact_text_is_refused_on_every_fact_write(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        for blank in ("   ", "\t\n", "\x00 \x00"):
            refused = http.post("/v1/facts", json=fact_body(blank))
            assert refused.status_code == 422 and refused.json()["field"] == "text", (blank, refused.text)
        blanks = (("subjectKey", fact_body("Real text", subject="  ")), ("kind", fact_body("Real text", kind="\t")))
        for field, body in blanks:
            refused = http.post("/v1/facts", json=body)
            assert refused.status_code == 422 and refused.json()["field"] == field, (field, refused.text)
        fact = http.post("/v1/facts", json=fact_body("Lives in Lisbon", kind="home"))
        assert fact.status_code == 201  # positive control
        correct = http.post(f"/v1/facts/{fact.json()['id']}/correct", json={"text": "  ", "reason": "moved"})
        assert correct.status_code == 422 and correct.json()["field"] == "text", correct.text
        assert _stored_facts(http) == ["Lives in Lisbon"]  # the refused correction retired nothing
        assert http.get(f"/v1/facts/{fact.json()['id']}").json()["status"] == "active"
        pending = http.post("/v1/facts", params={"origin": "derived"}, json=fact_body("Lives in Lisbn", kind="home2"))
        assert pending.json()["memory"]["status"] == "pending_review"
    with server.client(server.key(role="reviewer")) as http:
        blank_edit = http.post(f"/v1/review/{pending.json()['id']}/edit-and-approve", json={"text": " \n "})
        assert blank_edit.status_code == 422 and blank_edit.json()["field"] == "text", blank_edit.text
        edited = http.post(f"/v1/review/{pending.json()['id']}/edit-and-approve", json={"text": "Lives in Lisbon!"})
        assert edited.status_code == 200, edited.text


def test_an_episode_of_blanks_is_refused_alone_and_in_a_batch(server: LiveServer) -> None:
    blank = episode_body("  ", "", summary=" \t ")
    with server.client(server.key()) as http:
        refused = http.post("/v1/episodes", json=blank)
        assert refused.status_code == 422 and refused.json()["field"] == "summary", refused.text
        # The contract's own rules still hold: one text is enough, even with a blank summary.
        said = http.post("/v1/episodes", json=episode_body("Ship it on Friday", "", summary=" ", turn=1))
        assert said.status_code == 201, said.text
        batch = http.post("/v1/episodes/batch", json={"episodes": [episode_body("First", turn=2), blank]})
        assert [r["status"] for r in batch.json()["results"]] == [201, 422]
        assert batch.json()["results"][1]["field"] == "summary"


def test_the_cli_refuses_blank_fact_text(tmp_path: Path) -> None:
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path), "ENGRAM_EMBEDDER": "hashing"}

    def remember(text: str) -> subprocess.CompletedProcess[str]:
        return engram("remember", text, "--subject", "user", env=env)

    refused = remember("   ")
    assert refused.returncode == 1 and "error: text must not be blank" in refused.stderr, refused.stderr
    assert remember("The user likes tea").returncode == 0  # positive control
