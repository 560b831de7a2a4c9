"""The extraction queue: an episode written with extract=true queues its job in the same
transaction; workers run it beside the write path, retry what may pass, and show every state."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb.core.assist import queue
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.extraction import drain, run_claimed
from engramdb.models.assist import ExtractRequest
from engramdb.storage.port import Store
from tests.assist.brain import Brain
from tests.assist.conftest import llm_settings
from tests.assist.helpers import fact
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields
from tests.sdk.chat_server import Reply, ScriptedChat

LISBON = "The user lives in Lisbon."


def wait_for(http: httpx.Client, job_id: str, *states: str, timeout: float = 30.0) -> dict[str, Any]:
    """The job once it is in one of ``states`` (polled; the deadline only bounds a broken run)."""
    deadline = time.monotonic() + timeout
    while True:
        job: dict[str, Any] = http.get(f"/v1/assist/jobs/{job_id}").json()
        if job.get("state") in states or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def test_an_episode_written_with_extract_queues_a_job_that_workers_run(live: LiveServer, brain: Brain) -> None:
    brain.facts = [fact("user", "location", LISBON)]
    with live.client(live.key()) as http:
        written = http.post("/v1/episodes", params={"extract": "true"}, json=episode_body(LISBON, "Noted."))
        assert written.status_code == 201
        job_id = written.json()["extractionJobId"]
        assert job_id and written.json()["outcome"] == "created"
        done = wait_for(http, job_id, "done", "failed")
        assert (done["state"], done["attempts"], done["kind"]) == ("done", 1, "extract")
        assert done["input"] == {"episodeIds": [written.json()["id"]], "trustClass": "mixed"}
        [lisbon] = done["result"]["items"]
        assert (lisbon["action"], lisbon["sourceEventId"]) == ("parked", written.json()["id"])
        # The fact's trust class is the episode's (trusted), its origin derived: it waits for review.
        fact_view = http.get(f"/v1/facts/{lisbon['factId']}").json()
        assert (fact_view["origin"], fact_view["status"], fact_view["event"]["trustClass"]) == (
            "derived",
            "pending_review",
            "trusted",
        )
        # Written again (the outbox retries): one episode, one job, no second run.
        again = http.post("/v1/episodes", params={"extract": "true"}, json=episode_body(LISBON, "Noted."))
        assert (again.status_code, again.json()["extractionJobId"]) == (200, job_id)
        assert [j["jobId"] for j in http.get("/v1/assist/jobs").json()["jobs"]] == [job_id]
        # Positive control: without extract, no job.
        plain = http.post("/v1/episodes", json=episode_body("Another turn", "Ok.", turn=1)).json()
        assert plain["extractionJobId"] is None and len(http.get("/v1/assist/jobs").json()["jobs"]) == 1
    assert len(brain.asked("extract")) == 1


def test_a_failure_that_may_pass_is_retried_with_backoff_and_visible(
    store: Store, tmp_path: Path, brain: Brain
) -> None:
    brain.facts = [fact("user", "location", LISBON)]
    brain.raw = [Reply("busy", status=503), Reply("busy", status=503)]
    chat = ScriptedChat(brain)
    live = LiveServer(llm_settings(tmp_path, chat.url, job_backoff_seconds=0.5, workers=1), store, HashingEmbedder())
    live.start()
    try:
        with live.client(live.key()) as http:
            job = http.post("/v1/extract/queue", json={"text": LISBON}).json()
            assert job["state"] in ("queued", "running") and job["maxAttempts"] == 5
            seen = wait_for(http, job["jobId"], "done", "failed")
            assert (seen["state"], seen["attempts"]) == ("done", 3)  # two 503s, then the answer
            assert seen["error"] is None and seen["result"]["items"][0]["action"] == "parked"
            usage = http.get("/v1/assist/usage", headers={"Authorization": f"Bearer {live.key(role='admin')}"})
            assert usage.json()["byPurpose"][0]["calls"] == 3 and usage.json()["byPurpose"][0]["failed"] == 2
    finally:
        live.stop()
        chat.close()


def test_a_failure_that_will_not_pass_fails_the_job_with_its_error(
    service: MemoryService, agent: Caller, brain: Brain, scope: dict[str, Any]
) -> None:
    brain.raw = ["not json", "not json either"]
    job = service.assist.queue_extraction(agent, ExtractRequest.model_validate({"text": LISBON}))
    assert drain(service, "t1") == 1
    failed = service.assist.get_assist_job(agent, job.job_id)
    assert (failed.state, failed.attempts) == ("failed", 1) and "model_output_invalid" in (failed.error or "")


@pytest.mark.parametrize(
    "usage", ['{"prompt_tokens": 1e400, "completion_tokens": 5}', '{"prompt_tokens": 100000000000000000000000000}']
)
def test_a_job_whose_model_reports_absurd_usage_finishes(
    service: MemoryService, agent: Caller, brain: Brain, usage: str
) -> None:
    # Issue 30: usage.prompt_tokens of 1e400 left the job "running" until its lease ended.
    answer = {"facts": [{"turn": 0, "subjectKey": "user", "kind": "home", "text": LISBON, "confidence": 0.9}]}
    brain.raw = [Reply(json.dumps(answer), usage_json=usage)]
    job = service.assist.queue_extraction(agent, ExtractRequest.model_validate({"text": LISBON}))
    assert drain(service, "t1") == 1
    done = service.assist.get_assist_job(agent, job.job_id)
    assert done.state == "done" and done.result is not None, done.error
    assert [i.action for i in done.result.items] == ["parked"]  # the fact was extracted all the same


def test_a_job_whose_end_cannot_be_stored_is_failed_not_left_running(
    service: MemoryService, agent: Caller, brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The job's end (its ledger and its state) is one transaction; should the ledger not be storable
    # (as 10^26 tokens were before the client refused such counts), the job still ends, failed.
    from engramdb.core.assist.llm import client

    monkeypatch.setattr(client, "_count", lambda usage, name: 10**26)  # the parser before issue 30
    answer = {"facts": [{"turn": 0, "subjectKey": "user", "kind": "home", "text": LISBON, "confidence": 0.9}]}
    brain.raw = [json.dumps(answer)]
    job = service.assist.queue_extraction(agent, ExtractRequest.model_validate({"text": LISBON}))
    assert drain(service, "t1") == 1
    ended = service.assist.get_assist_job(agent, job.job_id)
    assert ended.state == "failed" and "could not be stored" in (ended.error or ""), ended


def test_retries_stop_at_the_jobs_attempts(store: Store, tmp_path: Path, agent: Caller) -> None:
    brain = Brain(raw=[Reply("down", status=502)] * 3)
    chat = ScriptedChat(brain)
    try:
        store.tenant("t1", create=True)
        settings = llm_settings(tmp_path, chat.url, job_attempts=2, job_backoff_seconds=0.05)
        service = MemoryService(store, HashingEmbedder(), settings)
        job = service.assist.queue_extraction(agent, ExtractRequest.model_validate({"text": LISBON}))
        # One run, not drain(): on a slow machine drain's next claim came after the 50 ms backoff
        # and ran the second attempt too (CI, PostgreSQL).
        tenant = store.tenant("t1")
        claimed = queue.claim(tenant, "t1", lease_seconds=300.0)
        assert claimed is not None
        run_claimed(service, tenant, claimed)
        retrying = service.assist.get_assist_job(agent, job.job_id)  # once failed: due again later, and says why
        assert (retrying.state, retrying.attempts) == ("queued", 1) and "HTTP 502" in (retrying.error or "")
        assert (retrying.next_attempt_at or "") > retrying.updated_at
        time.sleep(0.1)  # the backoff
        drain(service, "t1")
        failed = service.assist.get_assist_job(agent, job.job_id)
        assert (failed.state, failed.attempts) == ("failed", 2) and "HTTP 502" in (failed.error or "")
    finally:
        chat.close()


def test_a_job_whose_worker_died_is_taken_again(service: MemoryService, agent: Caller, brain: Brain) -> None:
    brain.facts = [fact("user", "location", LISBON)]
    job = service.assist.queue_extraction(agent, ExtractRequest.model_validate({"text": LISBON}))
    tenant = service.shared.store.tenant("t1")
    taken = queue.claim(tenant, "t1", lease_seconds=-1)  # a worker took it, its lease is over, it never finished
    assert taken is not None and service.assist.get_assist_job(agent, job.job_id).state == "running"
    assert drain(service, "t1") == 1
    done = service.assist.get_assist_job(agent, job.job_id)
    assert (done.state, done.attempts) == ("done", 2)


def test_a_job_of_a_revoked_key_does_not_run(service: MemoryService, brain: Brain) -> None:
    from engramdb.core import auth

    _, record = auth.create_key(service.shared.store, tenant="t1", role="agent", grant=scope_fields())
    caller = Caller("t1", record.key_id, "agent", scope_fields())
    job = service.assist.queue_extraction(caller, ExtractRequest.model_validate({"text": LISBON}))
    auth.revoke_key(service.shared.store, tenant="t1", key_id=record.key_id)
    drain(service, "t1")
    failed = service.assist.get_assist_job(caller, job.job_id)
    assert failed.state == "failed" and "revoked" in (failed.error or "") and brain.asked("extract") == []
    # Positive control: a job of a key still valid runs.
    _, valid = auth.create_key(service.shared.store, tenant="t1", role="agent", grant=scope_fields())
    other = service.assist.queue_extraction(
        Caller("t1", valid.key_id, "agent", scope_fields()), ExtractRequest.model_validate({"text": "Something else."})
    )
    drain(service, "t1")
    assert service.assist.get_assist_job(caller, other.job_id).state == "done" and len(brain.asked("extract")) == 1


def test_jobs_are_seen_only_from_their_scope(service: MemoryService, agent: Caller) -> None:
    job = service.assist.queue_extraction(agent, ExtractRequest.model_validate({"text": LISBON}))
    twice = service.assist.queue_extraction(agent, ExtractRequest.model_validate({"text": LISBON}))
    assert twice.job_id == job.job_id  # the same request queued twice is one job
    bob = Caller("t1", "bob-key", "agent", scope_fields(participantScopeHash="b" * 64))
    from engramdb.errors import NotFoundError
    from engramdb.models.assist import AssistJobQuery

    assert [j.job_id for j in service.assist.list_assist_jobs(agent, AssistJobQuery()).jobs] == [job.job_id]
    assert service.assist.list_assist_jobs(bob, AssistJobQuery()).jobs == []
    try:
        service.assist.get_assist_job(bob, job.job_id)
        raise AssertionError("bob saw alice's job")
    except NotFoundError:
        pass
    reviewer = Caller("t1", "rev", "reviewer")
    assert [j.job_id for j in service.assist.list_assist_jobs(reviewer, AssistJobQuery()).jobs] == [job.job_id]
