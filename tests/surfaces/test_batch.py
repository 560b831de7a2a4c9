"""POST /v1/episodes/batch: one transaction for the good items, a problem for each bad one."""

from __future__ import annotations

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
