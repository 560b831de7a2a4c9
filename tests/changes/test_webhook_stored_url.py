"""An endpoint stored before its URL was checked at registration (0f2df62), with a URL httpx cannot
send to: its deliveries fail their tries, back off and end as a dead letter, as an unreachable
endpoint's do, where each try once raised outside that accounting (an error a second, for ever).
The row is made so in the SQLite file, as an older server left it; one backend is enough."""

from __future__ import annotations

import time

import pytest

from engramdb.storage.sqlite.store import SQLiteStore
from tests.changes.conftest import FAST
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields


@pytest.fixture
def backend() -> str:
    return "sqlite"


def test_a_stored_url_httpx_cannot_use_fails_its_tries_into_a_dead_letter(server: LiveServer) -> None:
    assert isinstance(server.store, SQLiteStore)
    with server.client(server.key(role="admin")) as admin:
        head = admin.get("/v1/changes").json()["head"]
        hook = admin.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/x", "after": head}).json()["webhookId"]
        with server.store.tenant("t1")._db.write() as conn:  # as a server before 0f2df62 would have kept it
            conn.execute("UPDATE webhooks SET url = ? WHERE webhook_id = ?", ("http://[::1", hook))
        scope = scope_fields()
        assert admin.post("/v1/episodes", json=episode_body("A change to deliver.", scope=scope)).status_code == 201
        dead_letters = f"/v1/webhooks/{hook}/dead-letters"
        deadline = time.monotonic() + 30
        while not admin.get(dead_letters).json()["deadLetters"]:
            assert time.monotonic() < deadline, "no dead letter: the tries were not counted"
            time.sleep(0.05)
        [dead] = admin.get(dead_letters).json()["deadLetters"]
        assert dead["attempts"] == FAST.attempts and "InvalidURL" in dead["lastError"], dead
