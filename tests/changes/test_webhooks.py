"""Webhooks against a real server and a real endpoint on loopback (both backends): registered by an
admin with the secret shown once, deliveries signed and in order, retried, dead after the last
try and sent again by a replay, the kinds asked for only, and a changed server key said plainly."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from engramdb.storage.sqlite.store import SQLiteStore
from tests.changes.conftest import FAST
from tests.changes.receiver import Receiver
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields

SCOPE = scope_fields()


def wait_for(done: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.02)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as endpoint:
        yield endpoint


@pytest.fixture
def admin(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(server.key(role="admin")) as http:
        yield http


def _register(admin: httpx.Client, receiver: Receiver, **extra: Any) -> dict[str, Any]:
    answer = admin.post("/v1/webhooks", json={"url": receiver.url, **extra})
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    receiver.secret = created["secret"]
    return created


def _write(admin: httpx.Client, count: int, start: int = 0) -> list[str]:
    ids = []
    for i in range(start, start + count):
        answer = admin.post("/v1/episodes", json=episode_body(f"Turn {i}.", session="hooks", turn=i, scope=SCOPE))
        assert answer.status_code == 201, answer.text
        ids.append(answer.json()["id"])
    return ids


def test_an_endpoint_gets_every_change_after_its_registration_signed_and_in_order(
    admin: httpx.Client, receiver: Receiver
) -> None:
    before = _write(admin, 2)  # before registration: not sent
    created = _register(admin, receiver)
    assert created["secret"].startswith("whsec_")
    assert created["cursor"] == admin.get("/v1/changes").json()["changes"][-1]["seq"]  # the head when registered
    ids = _write(admin, 12, start=2)
    wait_for(lambda: len(receiver.applied) == 12)
    assert [c["id"] for c in receiver.applied] == ids and not set(before) & {c["id"] for c in receiver.applied}
    seqs = [c["seq"] for c in receiver.applied]
    assert seqs == sorted(seqs) and len(set(seqs)) == 12
    assert receiver.counts["refused"] == 0 and len(receiver.taken) == len(set(receiver.taken)) >= 3  # batches of 5
    wait_for(lambda: admin.get("/v1/webhooks").json()["webhooks"][0]["delivered"] == len(receiver.taken))
    listed = admin.get("/v1/webhooks").json()["webhooks"][0]
    assert listed["pending"] is False and listed["cursor"] == receiver.applied[-1]["seq"]


def test_the_secret_is_shown_once_and_stored_nowhere(server: LiveServer, admin: httpx.Client) -> None:
    created = admin.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/none", "label": "ops"}).json()
    secret = created["secret"]
    listed = admin.get("/v1/webhooks").json()["webhooks"]
    assert [w["webhookId"] for w in listed] == [created["webhookId"]] and "secret" not in listed[0]
    assert listed[0]["secretFingerprint"] == hashlib.sha256(secret.encode()).hexdigest()[:12]
    if isinstance(server.store, SQLiteStore):  # the database's bytes hold the endpoint, not its secret
        tenant = server.store.tenant("t1")
        tenant._db.checkpoint()
        path = tenant.path
        data = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
        assert created["webhookId"].encode() in data  # positive control: the file holds the endpoint
        assert secret.encode() not in data and secret.removeprefix("whsec_").encode() not in data


def test_webhooks_are_an_admins_alone(server: LiveServer, admin: httpx.Client) -> None:
    with server.client(server.key()) as agent:
        assert agent.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/x"}).status_code == 403
        assert agent.get("/v1/webhooks").status_code == 403
    assert admin.post("/v1/webhooks", json={"url": "ftp://example.com/x"}).status_code == 422
    assert admin.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/x", "kinds": ["exploded"]}).status_code == 422
    assert admin.delete("/v1/webhooks/wh_missing").status_code == 404
    assert admin.post("/v1/webhooks/wh_missing/replay", json={}).status_code == 404
    made = admin.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/x"}).json()
    assert admin.delete(f"/v1/webhooks/{made['webhookId']}").status_code == 204
    assert admin.get("/v1/webhooks").json()["webhooks"] == []
    entries = admin.get("/v1/audit", params={"action": "webhook."}).json()["entries"]
    assert [e["action"] for e in entries] == ["webhook.create", "webhook.delete"]


def test_a_failing_endpoint_is_retried_then_dead_lettered_and_a_replay_sends_it_again(
    admin: httpx.Client, receiver: Receiver
) -> None:
    receiver.fail_share = 2.0  # every call fails, before applying anything
    head = admin.get("/v1/changes").json()["head"]
    first = _write(admin, 3)
    hook = _register(admin, receiver, after=head)["webhookId"]  # the three in its first delivery
    dead_letters = f"/v1/webhooks/{hook}/dead-letters"
    wait_for(lambda: len(admin.get(dead_letters).json()["deadLetters"]) == 1)
    [dead] = admin.get(dead_letters).json()["deadLetters"]
    assert dead["attempts"] == FAST.attempts and dead["lastStatus"] == 500 and dead["changes"] == 3
    assert receiver.arrivals == [dead["deliveryId"]] * FAST.attempts  # the same delivery, tried again
    assert [w["deadLetters"] for w in admin.get("/v1/webhooks").json()["webhooks"]] == [1]  # counted, bodies unread
    receiver.fail_share = 0.0
    later = _write(admin, 2, start=3)  # the endpoint goes on after a dead letter
    wait_for(lambda: [c["id"] for c in receiver.applied] == later)
    replayed = admin.post(f"/v1/webhooks/{hook}/replay", json={"deliveryId": dead["deliveryId"]}).json()
    assert replayed["replayed"] == [dead["deliveryId"]]
    wait_for(lambda: len(receiver.applied) == 5)
    assert [c["id"] for c in receiver.applied] == later + first and receiver.taken[-1] == dead["deliveryId"]
    assert admin.get(dead_letters).json()["deadLetters"] == []
    assert [w["deadLetters"] for w in admin.get("/v1/webhooks").json()["webhooks"]] == [0]
    assert admin.post(f"/v1/webhooks/{hook}/replay", json={"deliveryId": dead["deliveryId"]}).status_code == 404


def test_an_endpoint_gets_only_the_kinds_it_asked_for(admin: httpx.Client, receiver: Receiver) -> None:
    _register(admin, receiver, kinds=["deleted"])
    ids = _write(admin, 4)
    for gone in ids[1:3]:
        assert admin.delete(f"/v1/episodes/{gone}", params=SCOPE).status_code == 200
    wait_for(lambda: len(receiver.applied) == 2)
    time.sleep(0.3)  # a few more polls: nothing else comes
    assert [(c["kind"], c["id"]) for c in receiver.applied] == [("deleted", ids[1]), ("deleted", ids[2])]


def test_a_changed_server_key_stops_deliveries_saying_why(
    server: LiveServer, admin: httpx.Client, receiver: Receiver
) -> None:
    hook = _register(admin, receiver)["webhookId"]
    service = server.app.state.service
    service.webhooks.keys.path.write_text("00" * 32)  # another key: this endpoint's secret is gone
    service.webhooks.keys._key = None
    _write(admin, 1)
    wait_for(lambda: "register it again" in (admin.get("/v1/webhooks").json()["webhooks"][0]["lastError"] or ""))
    assert receiver.counts["calls"] == 0  # nothing was sent signed with a secret nobody holds
    assert admin.get(f"/v1/webhooks/{hook}/dead-letters").status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1",  # an address httpx cannot read: every delivery failed before it was sent
        "http://" + "a" * 64 + ".example.com/x",  # a DNS label longer than 63
        "http://xn--zz.example/x",  # not an IDNA label
        "http://127.0.0.1:99999/x",  # no such port
        "http://user:secret@127.0.0.1:9/x",  # credentials, listed back with the endpoint
    ],
)
def test_an_endpoint_a_delivery_could_not_be_sent_to_is_refused(admin: httpx.Client, url: str) -> None:
    answer = admin.post("/v1/webhooks", json={"url": url})
    assert answer.status_code == 422 and answer.json()["field"] == "url", answer.text
    assert admin.get("/v1/webhooks").json()["webhooks"] == []
    assert admin.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/x"}).status_code == 201  # the control
