"""A cascading delete takes at most MAX_DELETED records: a larger one is refused, not cut short. It
was neither: a hub with 49,995 children went whole, and a tree deeper than the walk's stop lost its
first levels and kept the records below. The limit is lowered here (the server runs in this process)
so that a tree past it stays small."""

from __future__ import annotations

import pytest

from engramdb.core.knowledge import deleting
from tests.conftest import LiveServer

LIMIT = 5


def _tree(children: int, grandchildren: int) -> dict[str, object]:
    below = [{"n": i, "LEAF": [{"m": j} for j in range(grandchildren)]} for i in range(children)]
    return {"label": "HUB", "data": {"name": "hub", "NODE": below}}


def test_a_cascade_past_the_limit_is_refused_and_deletes_nothing(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deleting, "MAX_DELETED", LIMIT)
    with server.client(server.key()) as http:
        big = http.post("/v1/records", json=_tree(3, 2)).json()["records"][0]["id"]  # 1 + 3 + 6 records
        for dry_run in ("true", "false"):
            refused = http.delete(f"/v1/records/{big}", params={"cascade": "true", "dryRun": dry_run})
            assert refused.status_code == 422, refused.text
            assert refused.json()["field"] == "cascade" and "more than 5" in refused.json()["message"]
        assert http.post("/v1/records/search", json={"count": True}).json()["total"] == 10  # nothing went

        small = http.post("/v1/records", json=_tree(2, 1)).json()["records"][0]["id"]  # 1 + 2 + 2: within it
        deleted = http.delete(f"/v1/records/{small}", params={"cascade": "true"})
        assert deleted.status_code == 200 and len(deleted.json()["records"]) == 5, deleted.text  # the control
        assert http.post("/v1/records/search", json={"count": True}).json()["total"] == 10
