"""Authorization rows: refused contexts send nothing; eligible ones send the full scope filter."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engramdb.contract.events import Scope
from engramdb.sdk.host import judge
from engramdb.sdk.outbox.store import FILE_NAME
from engramdb.sdk.recall import CachedMemory, RecentWrites
from tests.conftest import LiveServer
from tests.factories import participant, scope_fields
from tests.sdk.conftest import SessionFactory
from tests.sdk.helpers import FaultProxy, host_for

REFUSED: dict[str, dict[str, Any]] = {
    "group conversation": {"conversation_kind": "group"},
    "channel conversation": {"conversation_kind": "channel"},
    "shared kind, private scope": {"conversation_kind": "shared"},
    "cron trigger": {"trigger": "cron"},
    "heartbeat trigger": {"trigger": "heartbeat"},
    "hook trigger": {"trigger": "hook"},
    "automation trigger": {"trigger": "automation"},
    "subagent": {"is_subagent": True},
    "non-primary": {"is_primary": False},
    "unknown runtime": {"runtime": "langchain"},
    **{
        f"session key {k}": {"session_key": k}
        for k in (
            "agent:main:discord:group:123",
            "agent:main:slack:channel:C1",
            "agent:main:cron:nightly",
            "agent:main:heartbeat",
            "agent:main:hook:gmail",
            "agent:main:node:n1",
            "agent:main:subagent:worker-2",
            "agent:main:active-memory",
            "agent:main:incognito:dm",
            "global",
            "unknown",
        )
    },
}
BAD_SESSION_IDS = ["", "   ", "has space", "global", "unknown", "tab\there", "new\nline", "x" * 300, "-leading"]


def _queued(profile: Path) -> int:
    if not (profile / FILE_NAME).exists():
        return 0
    with sqlite3.connect(profile / FILE_NAME) as db:
        return int(db.execute("SELECT count(*) FROM pending").fetchone()[0])


def _assert_inert(session: Any, recorder: FaultProxy, profile: Path) -> None:
    assert session.after_turn("I live in Lisbon.", "Noted.") is None and session.last_skip
    assert session.remember("user", "city", "The user lives in Lisbon.") is None
    assert session.before_compaction([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]) is None
    assert session.before_inference("where does the user live?") == ""
    assert session.last_recall_error
    assert recorder.seen == [] and _queued(profile) == 0


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_ineligible_contexts_neither_recall_nor_write(
    case: str, make_session: SessionFactory, recorder: FaultProxy, scope: dict[str, Any], profile: Path
) -> None:
    session = make_session(recorder.url, host=host_for(scope, **REFUSED[case]))
    assert not session.verdict.can_read and not session.verdict.can_write
    _assert_inert(session, recorder, profile)


@pytest.mark.parametrize("session_id", BAD_SESSION_IDS)
def test_malformed_or_ambiguous_session_ids_are_refused(
    session_id: str, make_session: SessionFactory, recorder: FaultProxy, profile: Path
) -> None:
    session = make_session(recorder.url, session_id=session_id)
    _assert_inert(session, recorder, profile)
    assert session.last_skip and "session id" in session.last_skip


def test_sandboxed_runs_never_write_and_read_only_sandbox_eligible_scopes(
    make_session: SessionFactory, proxy: FaultProxy, server: LiveServer, scope: dict[str, Any], tmp_path: Path
) -> None:
    closed = make_session(proxy.url, host=host_for(scope, sandboxed=True), profile_dir=tmp_path / "a")
    _assert_inert(closed, proxy, tmp_path / "a")
    eligible_scope = {**scope, "sandboxEligible": True}
    key = server.key(**eligible_scope)
    session = make_session(
        proxy.url, api_key=key, host=host_for(eligible_scope, sandboxed=True), profile_dir=tmp_path / "b"
    )
    assert session.after_turn("I live in Lisbon.", "Noted.") is None and "sandboxed" in (session.last_skip or "")
    session.before_inference("where does the user live?")
    assert session.last_recall_error is None
    [recall] = proxy.posts("/v1/recall")
    assert recall.body["scope"] == eligible_scope
    assert proxy.posts("/v1/episodes") == [] and _queued(tmp_path / "b") == 0


def test_every_request_carries_the_full_scope(
    make_session: SessionFactory, proxy: FaultProxy, scope: dict[str, Any], agent_key: str
) -> None:
    session = make_session(proxy.url, api_key=agent_key, exclude_current_session=True)
    session.before_inference("which language for billing?")
    episode_id = session.after_turn("Use TypeScript for billing.", "Will do.")
    fact_id = session.remember("user", "language", "The user wants TypeScript for billing.")
    assert session.outbox is not None and session.outbox.flush(10)
    [recall] = proxy.posts("/v1/recall")
    wanted = {"query": "which language for billing?", "scope": scope, "limit": 8, "excludeSessionId": "session-1"}
    assert {k: recall.body[k] for k in wanted} == wanted
    [episode] = proxy.posts("/v1/episodes")
    [fact] = proxy.posts("/v1/facts")
    for body in (episode.body, fact.body):
        assert {k: body[k] for k in scope} == scope
    assert (episode.body["eventId"], fact.body["factId"]) == (episode_id, fact_id)


def test_no_value_leaks_across_participants_privacy_or_sandbox(
    make_session: SessionFactory, server: LiveServer, tmp_path: Path
) -> None:
    """A host key serves many users; each session's scope is the server's filter, not a hint."""
    key = server.key(role="host", agentId="coder", profileId="default")
    variants = {
        "alice": scope_fields(),
        "bob": scope_fields(participantScopeHash=participant("bob")),
        "shared": scope_fields(privacyScope="shared"),
        "sandbox": scope_fields(sandboxEligible=True),
    }
    sessions = {}
    for name, scope in variants.items():
        session = sessions[name] = make_session(host=host_for(scope), api_key=key, profile_dir=tmp_path / name)
        assert session.remember("user", "codeword", f"The codeword of {name} is {name}-zebra-42.")
        assert session.end_session(timeout=10)  # delivered; the recent-write cache is dropped too
    for name, session in sessions.items():
        outcome = session.recall("what is the codeword zebra")
        assert outcome.error is None and outcome.memories
        assert {m.text for m in outcome.memories} == {f"The codeword of {name} is {name}-zebra-42."}


@pytest.mark.parametrize("field", ["agentId", "profileId", "privacyScope", "participantScopeHash", "sandboxEligible"])
def test_the_recent_write_cache_is_filtered_by_every_scope_field(field: str) -> None:
    mine = Scope.model_validate(scope_fields())
    other_value = {
        "agentId": "other",
        "profileId": "other",
        "privacyScope": "shared",
        "participantScopeHash": participant("mallory"),
        "sandboxEligible": True,
    }[field]
    theirs = Scope.model_validate(scope_fields(**{field: other_value}))
    cache = RecentWrites()
    cache.add(CachedMemory("e" * 64, "EPISODE", "The launch code is tangerine.", theirs, "mixed"))
    assert cache.search("launch code", mine, limit=8) == []
    assert [m.id for m in cache.search("launch code", theirs, limit=8)] == ["e" * 64]


def test_verdict_allows_a_direct_primary_conversation(scope: dict[str, Any]) -> None:
    verdict = judge(host_for(scope, session_key="agent:main:discord:dm:42"), "session-1")
    assert verdict.can_read and verdict.can_write and verdict.scope == Scope.model_validate(scope)
