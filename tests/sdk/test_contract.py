"""Contract rows: ids against the shared fixture, scope validation, schema, upserts, supersession."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from engramdb.config import Settings
from engramdb.contract.events import Scope
from engramdb.sdk import Client
from engramdb.sdk.outbox.store import FILE_NAME
from tests.conftest import LiveServer
from tests.contract._helpers import BASE_FACT_ID, SCOPE_FIELDS, fixture, validator
from tests.sdk.conftest import SessionFactory
from tests.sdk.helpers import FaultProxy, dead_url, host_for, stored_episodes


def _fixture_scope() -> dict[str, Any]:
    return {k: fixture()["episodeInput"][k] for k in SCOPE_FIELDS}


def _bodies(profile: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(profile / FILE_NAME) as db:
        return [json.loads(b) for (b,) in db.execute("SELECT body FROM pending ORDER BY seq")]


def test_the_shared_fixture_gives_the_reference_episode_and_fact_ids(
    make_session: SessionFactory, server: LiveServer, profile: Path
) -> None:
    data = fixture()
    episode = data["episodeInput"]
    key = server.key(**_fixture_scope())
    host = host_for(_fixture_scope(), runtime="hermes")
    # Captured with nothing listening, so both bodies are still in the outbox when read (against
    # the live server its delivery thread could take the episode before the read).
    offline = make_session(dead_url(), host=host, api_key=key, session_id=episode["externalSessionId"])
    event_id = offline.after_turn(
        episode["userText"], episode["assistantText"], turn_id=episode["sourceEventId"], turn_index=episode["turnIndex"]
    )
    assert event_id is not None and event_id == data["expectedEventId"]
    fact_id = offline.remember(
        "user:language-preference",
        "preference",
        "The user prefers TypeScript for this service.",
        source_event_id=event_id,
    )
    assert fact_id == BASE_FACT_ID
    bodies = _bodies(profile)
    for body in bodies:
        assert validator().is_valid(body), list(validator().iter_errors(body))
    assert [b.get("eventId") or b.get("factId") for b in bodies] == [event_id, fact_id]
    offline.close(timeout=0)  # what it captured stays queued; the next session delivers it
    session = make_session(host=host, api_key=key, session_id=episode["externalSessionId"])
    assert session.outbox is not None and session.outbox.flush(10)
    with Client(server.url, key) as client:
        assert client.get_episode(event_id).event["eventId"] == data["expectedEventId"]
        assert client.get_fact(fact_id).event["factId"] == BASE_FACT_ID


@pytest.mark.parametrize(
    "override",
    [
        {"agent_id": None},
        {"agent_id": ""},
        {"agent_id": "   "},
        {"profile_id": None},
        {"profile_id": ""},
        {"participant_scope_hash": None},
        {"participant_scope_hash": ""},
        {"participant_scope_hash": "alice"},
        {"participant_scope_hash": "A" * 64},
        {"privacy_scope": "public"},
    ],
)
def test_blank_or_missing_scope_fields_are_refused(
    override: dict[str, Any],
    make_session: SessionFactory,
    recorder: FaultProxy,
    scope: dict[str, Any],
    profile: Path,
) -> None:
    session = make_session(recorder.url, host=host_for(scope, **override))
    assert session.verdict.can_write is False and session.verdict.can_read is False
    assert session.after_turn("Use TypeScript.", "Will do.") is None
    assert session.last_skip and "host metadata" in session.last_skip
    assert session.remember("user", "language", "TypeScript") is None
    assert session.before_inference("which language?") == ""
    assert session.last_recall_error and "host metadata" in session.last_recall_error
    assert recorder.seen == [] and _bodies(profile) == []  # nothing was sent, nothing queued


def test_the_models_reject_blank_scope_fields(scope: dict[str, Any]) -> None:
    for field in ("agentId", "profileId", "participantScopeHash"):
        for bad in ("", None):
            with pytest.raises(ValidationError):
                Scope.model_validate({**scope, field: bad})
        with pytest.raises(ValidationError):
            Scope.model_validate({k: v for k, v in scope.items() if k != field})


def test_repeated_delivery_upserts_one_record(make_session: SessionFactory, tmp_path: Path, settings: Settings) -> None:
    """Two processes (two profiles) capture the same turn: one id, two deliveries, one row."""
    ids = []
    for name in ("first", "second"):
        session = make_session(profile_dir=tmp_path / name)
        ids.append(session.after_turn("Deploys happen on Tuesdays.", "Noted."))
        assert session.outbox is not None and session.outbox.flush(10)
    assert ids[0] == ids[1] and stored_episodes(settings.home) == [ids[0]]


def test_replacing_a_fact_deactivates_the_old_one(
    make_session: SessionFactory, server: LiveServer, agent_key: str
) -> None:
    session = make_session()
    old = session.remember("user", "database", "The user prefers MongoDB.")
    new = session.memory_action(
        "replace", subject="user", kind="database", text="The user prefers PostgreSQL.", replaces=old
    )
    assert old and new and old != new
    assert session.outbox is not None and session.outbox.flush(10)
    with Client(server.url, agent_key) as client:
        before, after = client.get_fact(old), client.get_fact(new)
        current = client.list_facts(subject_key="user", kind="database").facts
    assert before.status == "superseded" and before.superseded_by_fact_id == new
    assert after.status == "active" and after.event["supersedesFactId"] == old
    assert [f.id for f in current] == [new]
