"""A review decision naming its scope by ``userId`` on a tenant whose participant salt was not yet
made: the salt's own transaction was opened inside the decision's, and SQLite's write lock is not
reentrant, so the request waited on itself forever and every later write of the tenant with it
(found by the fuzz test hanging the suite). Run against a real ``engram serve`` in its own process,
so a hang fails here on a timeout instead of wedging the test session."""

from __future__ import annotations

import signal
import uuid
from collections.abc import Iterator

import httpx
import pytest

from engramdb.core import auth
from engramdb.storage.registry import open_store
from engramdb_bench.faults.server import ServerProcess
from tests.factories import episode_body, scope_fields

DECISIONS = {
    "approve": {"reason": "looks right"},
    "reject": {"reason": "wrong"},
    "edit-and-approve": {"text": "The user prefers Rust.", "reason": "edited"},
}
NAMED = {
    "agentId": "coder",
    "profileId": "default",
    "privacyScope": "private",
    "sandboxEligible": False,
    "userId": "alice@example.com",
}
Keys = dict[str, tuple[str, str]]  # each decision's tenant: its reviewer's key and its agent's key


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, Keys]]:
    """One server per backend for the three decisions: each decision has a tenant of its own, so each
    is still the first to need its tenant's salt."""
    backend, tmp_path = request.param, tmp_path_factory.mktemp("salt")
    home = tmp_path / "home"
    home.mkdir()
    env = {"ENGRAM_HOME": str(home), "ENGRAM_EMBEDDER": "hashing"}
    url, options = f"sqlite:///{home}", {}
    if backend == "postgres":
        url, schema = request.getfixturevalue("pg_url"), f"t_{uuid.uuid4().hex[:12]}"
        options = {"schema": schema}
        env |= {"ENGRAM_DATABASE_URL": url, "ENGRAM_PG_SCHEMA": schema}
    store = open_store(url, **options)
    keys: Keys = {}
    try:
        for decision in DECISIONS:  # a tenant each: each decision is the first to need the salt
            tenant = f"t-{decision}"
            reviewer, _ = auth.create_key(store, tenant=tenant, role="reviewer", grant={}, create_tenant=True)
            agent, _ = auth.create_key(store, tenant=tenant, role="agent", grant=scope_fields())
            keys[decision] = (reviewer, agent)
    finally:
        store.close()
    server = ServerProcess(env, tmp_path / "server.log")
    server.start()
    yield server, keys
    server.stop(signal.SIGKILL)  # a wedged server cannot be asked to stop


@pytest.mark.parametrize("decision", sorted(DECISIONS))
def test_a_decision_naming_a_user_id_answers_and_leaves_the_tenant_writable(
    served: tuple[ServerProcess, Keys], decision: str
) -> None:
    server, keys = served
    reviewer, agent = keys[decision]
    fact_id = "0" * 64
    with httpx.Client(base_url=server.url, timeout=15) as http:
        answer = http.post(
            f"/v1/review/{fact_id}/{decision}",
            json={**DECISIONS[decision], "scope": NAMED},
            headers={"Authorization": f"Bearer {reviewer}"},
        )
        assert answer.status_code == 404 and answer.json()["id"] == fact_id  # looked up in the named scope
        written = http.post("/v1/episodes", json=episode_body(), headers={"Authorization": f"Bearer {agent}"})
        assert written.status_code == 201  # the tenant's write lock was let go
