"""POST /v1/episodes/batch: one transaction for the good items, a problem for each bad one."""

from __future__ import annotations

from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body, participant


def test_batch_writes_good_items_and_names_bad_ones(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        items = [
            episode_body("first turn", turn=0),
            episode_body("second turn", turn=1),
            episode_body("bad turn", turn=-1),
            episode_body("forged", turn=2, participantScopeHash=participant("mallory")),
            episode_body("first turn", turn=0),  # a repeat of item 0 in the same batch
        ]
        answer = http.post("/v1/episodes/batch", json={"episodes": items})
        assert answer.status_code == 200, answer.text
        results = answer.json()["results"]
        assert [r["status"] for r in results] == [201, 201, 422, 403, 200]
        assert results[2]["field"] == "turnIndex" and results[3]["field"] == "participantScopeHash"
        assert results[4]["id"] == results[0]["id"]
        again = http.post("/v1/episodes/batch", json={"episodes": items[:2]}).json()["results"]
        assert [r["status"] for r in again] == [200, 200]
        found = http.post("/v1/recall", json={"query": "turn", "limit": 50}).json()["memories"]
        assert sorted(m["text"].split("\n")[0] for m in found) == ["first turn", "second turn"]
        too_many = http.post("/v1/episodes/batch", json={"episodes": [episode_body(turn=i) for i in range(101)]})
        assert too_many.status_code == 422 and too_many.json()["field"] == "episodes"


def test_a_batchs_audit_entries_are_written_in_one_go(settings: Settings) -> None:
    """The chain's head is read, and the entries inserted, once a batch: each statement inside the
    tenant's writer lets Python's interpreter go, and beside a busy job every one cost a turn."""
    store = SQLiteStore(settings.home)
    live = LiveServer(settings, store, HashingEmbedder())
    live.start()
    try:
        with live.client(live.key()) as http:
            seen: list[str] = []
            store.tenant("t1")._db._writer.set_trace_callback(seen.append)  # the backend's own writer
            batch = [episode_body(f"turn {i}", turn=i) for i in range(50)]
            answer = http.post("/v1/episodes/batch", json={"episodes": batch})
            assert [r["status"] for r in answer.json()["results"]] == [201] * 50
            # The control: the trace sees a statement run once a row (each entry's insert).
            assert len([s for s in seen if s.startswith("INSERT INTO audit_log")]) == 50
            assert len([s for s in seen if "FROM audit_log ORDER BY seq DESC" in s]) == 1
            assert len([s for s in seen if "FROM api_keys WHERE revoked_at" in s]) == 1
        entries = store.tenant("t1").audit_entries(after_seq=0, limit=100)
        written = {e.target_id for e in entries if e.action == "episode.write"}
        assert written == {r["id"] for r in answer.json()["results"]}
    finally:
        live.stop()
        store.close()
