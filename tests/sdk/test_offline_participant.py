"""A host names its user by the user's own id, and the server is away when the session starts
(issue 31): the turns are queued with the raw id on the host's disk, land once the server is back,
exactly once, in the scope the server's hash names, and the raw id reaches no table, file or log
line of the server."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb.config import Settings
from engramdb.sdk import HostContext
from engramdb.sdk.outbox import OutboxStore
from engramdb.sdk.session import MemorySession
from engramdb.sdk.start import RESOLVE_EVERY

from .conftest import FAST
from .helpers import BlackHole, LateServer, dead_url, stored_episodes, wait_until

RAW = "rowan.quill-7731@example.test"  # a raw user id no other test, table or log line holds


def _session(late: LateServer, key: str, profile: Path, session_id: str = "desk-1", **host: Any) -> MemorySession:
    context = HostContext(agent_id="coder", profile_id="default", participant_id=RAW, **host)
    return MemorySession(
        late.url, api_key=key, host=context, session_id=session_id, profile_dir=profile, outbox=FAST, start_timeout=1
    )


def _server_bytes(home: Path) -> bytes:
    """Every file the server keeps (databases, their WAL, audit anchors), as one byte string."""
    return b"".join(path.read_bytes() for path in sorted(home.rglob("*")) if path.is_file())


def test_turns_taken_before_the_participant_is_resolved_land_once_in_its_scope(
    late: LateServer, settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    key = late.key(role="host", agentId="coder", profileId="default")
    profile = tmp_path / "host"
    away = _session(late, key, profile)
    assert not away.key_checked and away.scope is None and away.verdict.pending is not None
    offline = away.after_turn("I keep my bike in the garden shed.", "Noted.")
    assert offline is not None and away.last_skip is None
    assert away.remember("user", "bike", "The user keeps a bike in the garden shed.") is None
    assert away.last_skip is None  # queued: the server computes the factId, which covers the hash
    assert away.close(timeout=0) is False
    assert RAW.encode() in b"".join(p.read_bytes() for p in profile.iterdir())  # on the host's disk, queued
    assert [e.kind for e in OutboxStore(profile).pending()] == ["episode", "fact"]

    late.start()
    back = _session(late, key, profile)  # a later process: the outbox replays, the participant resolves
    assert back.key_checked and back.scope is not None
    online = back.after_turn("My bike is a green Brompton.", "Noted.")  # the positive control
    assert online is not None and back.end_session(10) and back.delivery.pending == 0
    back.close()

    assert sorted(stored_episodes(settings.home)) == sorted([offline, online])  # each exactly once
    with httpx.Client(base_url=late.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        scope = http.post(
            "/v1/scope/resolve", json={"userId": RAW, "privacyScope": "private", "sandboxEligible": False}
        ).json()["scope"]
        assert scope["participantScopeHash"] == back.scope.participant_scope_hash
        for event_id in (offline, online):
            episode = http.get(f"/v1/episodes/{event_id}", params=scope)
            assert (
                episode.status_code == 200
                and episode.json()["event"]["participantScopeHash"] == scope["participantScopeHash"]
            )
        facts = http.get("/v1/facts", params={**scope, "subjectKey": "user"}).json()["facts"]
        assert [f["event"]["text"] for f in facts] == ["The user keeps a bike in the garden shed."]
        bob = {"userId": "bob", "privacyScope": "private", "sandboxEligible": False}
        assert http.post("/v1/recall", json={"query": "bike shed", "scope": bob}).json()["memories"] == []
    assert RAW.encode() not in _server_bytes(settings.home)
    assert RAW not in caplog.text and all(RAW not in r.getMessage() for r in caplog.records)


def test_a_context_that_may_not_write_queues_nothing_for_an_unresolved_participant(tmp_path: Path) -> None:
    for refused in ({"is_subagent": True}, {"trigger": "cron"}, {"sandboxed": True}):
        context = HostContext(agent_id="coder", profile_id="default", participant_id=RAW, **refused)
        with MemorySession(
            dead_url(), host=context, session_id="s-1", profile_dir=tmp_path / "p", start_timeout=0.2
        ) as session:
            assert session.after_turn("I keep my bike in the garden shed.", "Noted.") is None, refused
            assert session.last_skip and session.delivery.pending == 0
    # The positive control: the same turn in a direct, interactive, primary context is queued.
    context = HostContext(agent_id="coder", profile_id="default", participant_id=RAW)
    with MemorySession(dead_url(), host=context, session_id="s-1", profile_dir=tmp_path / "p", start_timeout=0.2) as ok:
        assert ok.after_turn("I keep my bike in the garden shed.", "Noted.") is not None
        assert ok.delivery.pending == 1


def test_a_session_that_started_offline_resolves_its_participant_once_the_server_answers(
    late: LateServer, settings: Settings, tmp_path: Path
) -> None:
    key = late.key(role="host", agentId="coder", profileId="default")
    session = _session(late, key, tmp_path / "host")
    offline = session.after_turn("I keep my bike in the garden shed.", "Noted.")
    assert session.scope is None and session.recall("bike").error  # nothing is recalled yet
    late.start()
    # Recall asks the server again (at most every 5 s, within its own budget) and finds the scope.
    assert wait_until(lambda: session.recall("garden shed").error is None, timeout=20, step=0.5)
    assert session.scope is not None and session.key_checked
    online = session.after_turn("My bike is a green Brompton.", "Noted.")
    assert session.end_session(10)
    session.close()
    assert sorted(stored_episodes(settings.home)) == sorted([offline, online])


def test_while_the_server_hangs_writes_do_not_wait_and_recall_keeps_its_budget(
    black_hole: BlackHole, tmp_path: Path
) -> None:
    context = HostContext(agent_id="coder", profile_id="default", participant_id=RAW)
    with MemorySession(
        black_hole.url,
        host=context,
        session_id="s-1",
        profile_dir=tmp_path / "p",
        outbox=FAST,
        start_timeout=0.5,
        recall_timeout=0.3,
    ) as session:
        assert session.start_error  # the start waited its 0.5 s, once
        time.sleep(RESOLVE_EVERY)  # long enough that the session may ask the server again
        started = time.monotonic()
        assert session.after_turn("I keep my bike in the garden shed.", "Noted.") is not None
        assert session.remember("user", "bike", "The user keeps a bike in the garden shed.") is None
        # Queued on disk: a question to this server would wait out the client's 5 s timeout.
        assert time.monotonic() - started < 2.5
        started = time.monotonic()
        assert session.recall("bike").error
        assert time.monotonic() - started < 2.5  # asking the server is cut short at recall's budget
        assert session.delivery.pending == 2
