"""No model configured: every operation that needs one answers 501 saying how to configure one,
writes nothing, and everything else works as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.models.operations.assist import ASSIST_OPERATIONS
from engramdb.storage.port import Store
from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body

NEEDS_MODEL = {"extract", "queue_extraction", "reflect", "consolidate", "add"}
BODIES = {
    "extract": {"text": "I moved to Lisbon."},
    "queue_extraction": {"text": "I moved to Lisbon."},
    "reflect": {"subjectKey": "user"},
    "consolidate": {"kind": "likes"},
    "add": {"messages": [{"role": "user", "content": "I moved to Lisbon."}]},
}


@pytest.fixture
def plain(store: Store, tmp_path: Path) -> Iterator[LiveServer]:
    live = LiveServer(Settings(home=tmp_path / "home", embedder="hashing"), store, HashingEmbedder())
    live.start()
    yield live
    live.stop()


def test_every_model_operation_answers_501_and_writes_nothing(plain: LiveServer) -> None:
    admin = plain.client(plain.key(role="admin"))

    def audit_length() -> int:
        return len(admin.get("/v1/audit", params={"limit": 1000}).json()["entries"])

    with admin, plain.client(plain.key()) as http:
        assert {op.name for op in ASSIST_OPERATIONS if op.method == "POST"} - {"undo_consolidation"} == NEEDS_MODEL
        before = audit_length()
        for op in ASSIST_OPERATIONS:
            if op.name not in NEEDS_MODEL:
                continue
            answer = http.post(op.path, json=BODIES[op.name])
            problem = answer.json()
            assert (answer.status_code, problem["code"]) == (501, "model_not_configured"), op.name
            assert "ENGRAM_LLM__BASE_URL" in problem["message"] and "docs/assist.md" in problem["message"]
        episode = http.post("/v1/episodes", params={"extract": "true"}, json=episode_body("I moved to Lisbon."))
        assert (episode.status_code, episode.json()["code"]) == (501, "model_not_configured")
        assert http.get("/v1/episodes").json()["episodes"] == []  # nothing written
        assert audit_length() == before
        # Positive controls: the same writes without the model, and the reads that need none.
        assert http.post("/v1/episodes", json=episode_body("I moved to Lisbon.")).status_code == 201
        added = http.post("/v1/memories", params={"infer": "false"}, json=BODIES["add"])
        assert added.status_code == 200 and len(added.json()["episodes"]) == 1 and added.json()["created"] == []
        stored = http.post("/v1/facts", json=fact_body("The user lives in Lisbon.")).json()
        assert http.get(f"/v1/facts/{stored['id']}/links").json() == {"links": []}
        assert http.get("/v1/assist/jobs").json() == {"jobs": []}
        recalled = http.post("/v1/recall", json={"query": "Lisbon"}).json()
        assert len(recalled["memories"]) == 3
        usage = admin.get("/v1/assist/usage").json()
        assert (usage["configured"], usage["model"], usage["byPurpose"]) == (False, None, [])
