"""Model-assisted memory on every surface: REST answers that validate against the OpenAPI
document, the SDK (Mem0-style ``add``), ``MemorySession(extract=True)``, the CLI and MCP."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from engramdb.models.operations.assist import ASSIST_OPERATIONS
from engramdb.sdk import Client
from tests.assist.brain import Brain
from tests.assist.helpers import fact
from tests.assist.test_queue import wait_for
from tests.conftest import LiveServer
from tests.factories import fact_body
from tests.surfaces.requests import Checker

HIKING = "The user likes hiking in the Alps."


@pytest.fixture
def backend() -> str:
    """The surfaces speak HTTP, MCP and the command line: one backend behind them is enough here
    (the service tests run on both)."""
    return "sqlite"


def _derived_current(admin: Any) -> None:
    rule = {"status": "active", "weight": 0.5}
    assert admin.put("/v1/policy", json={"trust": {t: {"derived": rule} for t in ("trusted", "mixed")}}).is_success


def test_real_answers_of_the_model_operations_validate_against_the_document(live: LiveServer, brain: Brain) -> None:
    brain.facts = [fact("user", "likes", HIKING), fact("user", "likes", "The user likes hiking in the Alps!")]
    brain.verdicts = [{"about": "Alps", "of": "likes hiking", "verdict": "refines", "confidence": 0.9}]
    brain.reflections = [{"text": "The user seems to love mountains.", "evidence": ["hiking", "climbs"]}]
    agent, admin = live.client(live.key()), live.client(live.key(role="admin"))
    with agent, admin:
        check = Checker(admin.get("/openapi.json").json())
        _derived_current(admin)
        hikes = agent.post("/v1/facts", json=fact_body("The user likes hiking", kind="likes")).json()
        agent.post("/v1/facts", json=fact_body("The user climbs", kind="sport", sourceEventId="t2"))
        agent.post("/v1/facts", json=fact_body("The user likes hiking!", kind="likes", sourceEventId="t3"))
        result = check("extract", agent.post("/v1/extract", json={"text": HIKING})).json()
        created = next(i for i in result["items"] if i["action"] == "created")
        check("fact_links", agent.get(f"/v1/facts/{created['factId']}/links"))
        job = check("queue_extraction", agent.post("/v1/extract/queue", json={"text": "Nothing to see."})).json()
        assert wait_for(agent, job["jobId"], "done")["state"] == "done"
        check("get_assist_job", agent.get(f"/v1/assist/jobs/{job['jobId']}"))
        check("list_assist_jobs", agent.get("/v1/assist/jobs", params={"state": "done"}))
        reflected = check("reflect", agent.post("/v1/reflect", json={"subjectKey": "user"})).json()
        assert [i["action"] for i in reflected["items"]] == ["created"]
        merged = check("consolidate", agent.post("/v1/consolidate", json={"kind": "likes", "similarity": 0.9})).json()
        merged_id = merged["groups"][0]["merged"]["factId"]
        check("undo_consolidation", agent.post(f"/v1/facts/{merged_id}/unconsolidate", json={"reason": "no"}))
        added = check(
            "add",
            agent.post(
                "/v1/memories",
                json={
                    "messages": [
                        {"role": "user", "content": "By the way: the user likes hiking in the Alps!"},
                        {"role": "assistant", "content": "Noted."},
                    ]
                },
            ),
        ).json()
        assert len(added["episodes"]) == 1
        check("assist_usage", admin.get("/v1/assist/usage", params={"recent": 5}))
        # Problems: an unknown job, a derived fact as evidence, a bad body.
        check("get_assist_job", agent.get(f"/v1/assist/jobs/{'0' * 32}"))  # 404
        derived = check("reflect", agent.post("/v1/reflect", json={"factIds": [hikes["id"], created["factId"]]}))
        assert derived.status_code == 409  # created is derived: never evidence
        check("extract", agent.post("/v1/extract", json={"text": "a", "sessionId": "s"}))  # 422: two sources
    assert {op.name for op in ASSIST_OPERATIONS} == {name for name, status in check.checked if status < 300}
    assert {404, 409, 422} <= {status for _, status in check.checked}


def test_the_sdk_adds_messages_mem0_style(live: LiveServer, brain: Brain) -> None:
    brain.facts = [fact("user", "location", "The user lives in Lisbon."), fact("user", "pet", "The user has a cat.")]
    with Client(live.url, live.key()) as client:
        client.write_fact(fact_body("The user lives in Porto.", kind="location", validFrom="2026-01-01T00:00:00Z"))
        first = client.add(
            [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "The user lives in Lisbon. The user has a cat."},
                {"role": "assistant", "content": "Got it."},
            ]
        )
        assert len(first.episodes) == 1 and first.created == first.updated == []
        assert sorted(i.text or "" for i in first.parked) == ["The user has a cat.", "The user lives in Lisbon."]
        assert all(i.reason for i in first.parked) and first.usage is not None and first.usage.calls >= 1
        again = client.add([{"role": "user", "content": "The user has a cat."}], infer=True)
        assert [(i.action, i.text) for i in again.skipped] == [("duplicate", "The user has a cat.")]
        stored = client.add([{"role": "user", "content": "Just a note."}], infer=False)
        assert len(stored.episodes) == 1 and stored.usage is None
        episodes = client.list_episodes().episodes
        assert len(episodes) == 3 and episodes[0].event["userText"] == "Just a note."


def test_a_memory_session_with_extract_queues_each_delivered_turn(
    live: LiveServer, brain: Brain, tmp_path: Path
) -> None:
    from engramdb.sdk import MemorySession
    from tests.factories import scope_fields
    from tests.sdk.helpers import host_for

    brain.facts = [fact("user", "drink", "The user drinks green tea.")]
    key = live.key()
    with MemorySession(
        live.url,
        api_key=key,
        host=host_for(scope_fields()),
        session_id="s1",
        profile_dir=tmp_path / "profile",
        extract=True,
    ) as memory:
        event_id = memory.after_turn("The user drinks green tea. Every morning.", "Nice.")
        assert event_id and memory.end_session(timeout=10)
    with live.client(key) as http:
        [job] = http.get("/v1/assist/jobs").json()["jobs"]
        done = wait_for(http, job["jobId"], "done", "failed")
        assert done["input"]["episodeIds"] == [event_id] and done["result"]["items"][0]["action"] == "parked"
        assert http.get(f"/v1/episodes/{event_id}").status_code == 200


def test_a_memory_session_with_extract_still_delivers_when_no_model_is_set(store: Any, tmp_path: Path) -> None:
    from engramdb.config import Settings
    from engramdb.core.embedding import HashingEmbedder
    from engramdb.sdk import MemorySession
    from tests.factories import scope_fields
    from tests.sdk.helpers import host_for

    live = LiveServer(Settings(home=tmp_path / "home", embedder="hashing"), store, HashingEmbedder())
    live.start()
    try:
        key = live.key()
        with MemorySession(
            live.url,
            api_key=key,
            host=host_for(scope_fields()),
            session_id="s1",
            profile_dir=tmp_path / "profile",
            extract=True,
        ) as memory:
            event_id = memory.after_turn("The user drinks green tea.", "Nice.")
            assert memory.end_session(timeout=10)  # delivered, without the extraction
            assert memory.extraction_unavailable and "model_not_configured" in memory.extraction_unavailable
            assert memory.outbox is not None and memory.outbox.dead_letters() == []
        with live.client(key) as http:
            assert http.get(f"/v1/episodes/{event_id}").status_code == 200
    finally:
        live.stop()


def test_an_outbox_replays_an_extract_episode_exactly_once(live: LiveServer, brain: Brain, tmp_path: Path) -> None:
    from engramdb.sdk import MemorySession
    from tests.factories import scope_fields
    from tests.sdk.helpers import host_for

    brain.facts = [fact("user", "drink", "The user drinks green tea.")]
    key = live.key()
    for _ in range(2):  # the same turn captured again (a retried hook): one episode, one job
        with MemorySession(
            live.url,
            api_key=key,
            host=host_for(scope_fields()),
            session_id="s1",
            profile_dir=tmp_path / "p",
            extract=True,
        ) as memory:
            memory.after_turn("The user drinks green tea.", "Nice.", turn_index=0)
            assert memory.end_session(timeout=10)
    with live.client(key) as http:
        jobs = http.get("/v1/assist/jobs").json()["jobs"]
        assert len(jobs) == 1 and wait_for(http, jobs[0]["jobId"], "done")["state"] == "done"
    deadline = time.monotonic() + 5
    while len(brain.asked("extract")) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(brain.asked("extract")) == 1
