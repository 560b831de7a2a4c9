"""Aging through the real server and the SDK: policy bounds (422 naming the field), who may mark,
restore's 404 and 409, the jobs the server's supervisor runs, and a sweep run on request."""

from __future__ import annotations

import time

from engramdb.sdk import Client
from tests.conftest import LiveServer
from tests.factories import fact_body, participant, scope_fields


def test_retention_below_one_day_is_refused_and_names_the_field(server: LiveServer) -> None:
    with server.client(server.key(role="admin")) as admin:
        policy = admin.get("/v1/policy").json()
        assert policy["aging"]["archiveBelowStrength"] == 0.25
        assert policy["retention"] == {"episodeDays": None, "factDays": None}
        for section, field, value in (
            ("retention", "episodeDays", 0.5),
            ("retention", "factDays", 0),
            ("aging", "archiveAfterDays", 0),
            ("aging", "archiveBelowStrength", 2),
        ):
            refused = admin.put("/v1/policy", json={**policy, section: {field: value}})
            assert refused.status_code == 422 and field in refused.json()["field"], refused.text
        accepted = admin.put("/v1/policy", json={**policy, "retention": {"episodeDays": 1}})
        assert accepted.status_code == 200 and accepted.json()["retention"] == {"episodeDays": 1.0, "factDays": None}


def test_marks_are_a_persons_and_restore_is_scoped(server: LiveServer) -> None:
    with server.client(server.key()) as agent, server.client(server.key(role="admin")) as admin:
        fact = agent.post("/v1/facts", json=fact_body("The user's cat is Miso", kind="cat")).json()["id"]
        refused = agent.post(f"/v1/facts/{fact}/mark", json={"pinned": True})
        assert refused.status_code == 403, "the agent's key (a model) may not pin its own memories"
        marked = admin.post(f"/v1/facts/{fact}/mark", json={"pinned": True, "scope": scope_fields()})
        assert marked.status_code == 200 and marked.json()["pinned"] is True
        assert admin.post(f"/v1/facts/{fact}/mark", json={"scope": scope_fields()}).json()["field"] == "pinned"
        assert agent.post(f"/v1/facts/{fact}/restore", json={}).status_code == 409  # active: nothing to restore
        with server.client(server.key(**scope_fields(participantScopeHash=participant("bob")))) as bob:
            assert bob.post(f"/v1/facts/{fact}/restore", json={}).status_code == 404
            assert bob.post(f"/v1/episodes/{'0' * 64}/restore", json={}).status_code == 404


def test_the_server_runs_its_jobs_and_a_sweep_on_request(server: LiveServer) -> None:
    with Client(server.url, server.key(role="admin")) as sdk, server.client(server.key()) as agent:
        deadline = time.monotonic() + 30
        while not all(j.runs for j in sdk.list_jobs().jobs) and time.monotonic() < deadline:
            time.sleep(0.05)  # the supervisor's first pass, started by the server's lifespan
        jobs = {j.name: j for j in sdk.list_jobs().jobs}
        assert set(jobs) == {"usage", "aging", "copies"} and jobs["copies"].last_error is None
        aging = jobs["aging"]
        assert aging.runs >= 1 and aging.last_error is None and aging.last_run_at is not None
        assert aging.interval_seconds == 3600 and aging.next_run_at > aging.last_run_at
        assert agent.get("/v1/jobs").status_code == 403
        assert agent.post("/v1/jobs/aging/run").status_code == 403
        ran = sdk.run_aging()
        assert ran.archived == 0 and ran.erased_episodes == 0  # nothing is old yet
