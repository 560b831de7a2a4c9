"""Failing loudly where it matters (issue 20): a wrong key raises at start, not in the dead letters;
a session says where its writes stand; dead letters are listed and replayed from the CLI; a host
names its users by their own ids and the server derives their hash."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb.core import auth
from engramdb.errors import AuthenticationError, AuthorizationError
from engramdb.sdk import HostContext
from tests.cli import engram
from tests.conftest import LiveServer
from tests.factories import participant, scope_fields

from .conftest import SessionFactory
from .helpers import dead_url, host_for, stored_episodes, wait_until


def _engram(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return engram(*args, env={**os.environ, "COLUMNS": "200", **env})


def test_a_wrong_key_raises_at_start(make_session: SessionFactory, server: LiveServer, agent_key: str) -> None:
    wrong = agent_key.rsplit(".", 1)[0] + ".not-the-secret"
    with pytest.raises(AuthenticationError):
        make_session(server.url, api_key=wrong)
    # Positive control: the right key starts, and the server said so.
    session = make_session(server.url, api_key=agent_key)
    assert session.key_checked and session.delivery.last_error is None


def test_a_key_that_may_not_name_the_scope_raises_at_start(
    make_session: SessionFactory, server: LiveServer, agent_key: str, scope: dict[str, Any]
) -> None:
    with pytest.raises(AuthorizationError) as refused:
        make_session(server.url, api_key=agent_key, host=host_for(scope, participant_scope_hash=participant("bob")))
    assert refused.value.field == "participantScopeHash"


def test_an_unreachable_server_does_not_stop_the_session_and_says_so(make_session: SessionFactory) -> None:
    session = make_session(dead_url(), api_key="egm.t1.x.y", start_timeout=0.5)
    assert not session.key_checked and session.start_error and "transport" in session.start_error
    assert session.after_turn("Use TypeScript.", "Will do.") is not None  # queued on disk all the same
    state = session.delivery
    assert state.pending == 1 and state.dead_letters == 0 and state.last_error


def test_a_revoked_key_shows_in_the_delivery_state_and_its_dead_letters_replay_from_the_cli(
    make_session: SessionFactory, server: LiveServer, profile: Path, settings: Any
) -> None:
    token, record = auth.create_key(server.store, tenant="t1", role="agent", grant=scope_fields(), create_tenant=True)
    session = make_session(server.url, api_key=token)
    auth.revoke_key(server.store, tenant="t1", key_id=record.key_id)
    event_id = session.after_turn("Staging moved to Frankfurt.", "Noted.")
    assert event_id and wait_until(lambda: session.delivery.dead_letters == 1)
    state = session.delivery
    assert state.pending == 0 and state.last_error and state.last_error.startswith("401 unauthenticated")
    session.close(timeout=0)
    dead = _engram("outbox", "dead", "--profile", str(profile), "--json")
    assert dead.returncode == 0 and json.loads(dead.stdout.splitlines()[0])["memory_id"] == event_id
    assert event_id not in stored_episodes(settings.home)  # nothing landed yet (the control follows)
    replayed = _engram("outbox", "replay", "--profile", str(profile))
    assert replayed.returncode == 0 and "1 dead letters queued again" in replayed.stdout
    listed = _engram("outbox", "list", "--profile", str(profile))
    assert event_id[:12] in listed.stdout
    delivered = _engram("outbox", "deliver", "--profile", str(profile), "--url", server.url, ENGRAM_KEY=server.key())
    assert delivered.returncode == 0, delivered.stderr
    assert event_id in stored_episodes(settings.home)


def test_a_host_names_its_user_by_id_and_the_server_derives_the_hash(
    make_session: SessionFactory, server: LiveServer, settings: Any
) -> None:
    host_key = server.key(role="host", agentId="coder", profileId="default")
    host = HostContext(agent_id="coder", profile_id="default", participant_id="alice@example.com")
    session = make_session(server.url, api_key=host_key, host=host)
    assert session.key_checked and session.scope is not None
    hashed = session.scope.participant_scope_hash
    assert hashed != participant("alice@example.com") and len(hashed) == 64  # the server's salt, not ours
    event_id = session.after_turn("I prefer green tea.", "Noted.")
    assert session.end_session(5.0) and event_id in stored_episodes(settings.home)
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {host_key}"}) as http:
        mine = {"userId": "alice@example.com", "privacyScope": "private", "sandboxEligible": False}
        found = http.post("/v1/recall", json={"query": "green tea", "scope": mine}).json()["memories"]
        other = http.post("/v1/recall", json={"query": "green tea", "scope": {**mine, "userId": "bob"}}).json()
    assert [m["id"] for m in found] == [event_id] and other["memories"] == []
