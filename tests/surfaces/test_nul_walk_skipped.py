"""A body's strings were walked for NUL characters to remove, whatever the body: 3.2 s of a 15 MB
record write's 3.5 s check. JSON writes a NUL only as the escape \\u0000, so a body whose text holds
none is not walked; one that holds one still has its NULs removed (the server runs in this process:
the walk is counted)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engramdb.contract import events
from engramdb.contract.bounds import strip_nul
from tests.conftest import LiveServer
from tests.factories import episode_body


def test_only_a_body_with_a_nul_escape_is_walked(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[str] = []  # the episode bodies walked (small internal scopes are walked as well)

    def counted(value: Any) -> Any:
        if isinstance(value, dict) and "userText" in value:
            walked.append(value["userText"])
        return strip_nul(value)

    monkeypatch.setattr(events, "strip_nul", counted)
    with server.client(server.key()) as http:
        plain = http.post("/v1/episodes", json=episode_body("no nul here", "none here either"))
        assert plain.status_code == 201, plain.text
        assert walked == []

        with_nul = http.post("/v1/episodes", json=episode_body("a nul\u0000 inside", "and none here"))
        assert with_nul.status_code == 201, with_nul.text
        assert walked  # the control: this body was walked
        assert with_nul.json()["memory"]["event"]["userText"] == "a nul inside"  # and its NUL removed


def test_a_utf16_body_with_a_nul_still_has_it_removed(server: LiveServer) -> None:
    """json reads UTF-16 and UTF-32 bodies too, where the escape \\u0000 is not the bytes b"\\\\u0000":
    such a body is walked (a review found a NUL stored by SQLite, and a 500 from PostgreSQL)."""
    body = json.dumps({"role": "reviewer", "label": "lab\u0000el"}).encode("utf-16")
    with server.client(server.key(role="admin")) as http:
        created = http.post("/v1/keys", content=body, headers={"content-type": "application/json"})
        assert created.status_code == 201, created.text
        assert created.json()["label"] == "label"
        listed = {k["label"] for k in http.get("/v1/keys").json()["keys"]}
        assert "label" in listed and "lab\u0000el" not in listed
