"""Memories written through the REST API, as agents would, for the browser tests to look at."""

from __future__ import annotations

from typing import Any

from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body


def write(server: LiveServer, token: str) -> dict[str, Any]:
    """A few episodes, a corrected fact and a fact awaiting review; returns their ids."""
    with server.client(token) as http:
        for i, text in enumerate(
            [
                "Use TypeScript for the billing service.",
                "Deploy billing on Fridays.",
                "The staging database lives in Frankfurt.",
            ]
        ):
            answer = http.post("/v1/episodes", json=episode_body(text, turn=i, observedAt=f"2026-08-1{i}T09:00:00Z"))
            assert answer.status_code == 201, answer.text
        editor = http.post("/v1/facts", json=fact_body("The user edits in vim.", kind="editor")).json()
        parked = http.post(
            "/v1/facts", params={"origin": "derived"}, json=fact_body("The user drinks green tea.", kind="drink")
        ).json()
    assert parked["outcome"] == "parked"
    return {"editor": editor["id"], "parked": parked["id"]}
