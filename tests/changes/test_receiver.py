"""The receiver docs/operations.md shows (read from the page) takes EngramDB's real deliveries and
refuses forged ones and replays: an old signature, or a delivery id it took already."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from engramdb.core.changes.signing import signature
from tests.changes.receiver import Receiver, documented_receiver
from tests.changes.test_webhooks import _register, _write, wait_for
from tests.conftest import LiveServer

SECRET = "whsec_" + "k" * 43
BODY = json.dumps({"deliveryId": "wh_1.1-3", "changes": [{"seq": 2, "kind": "created"}]}).encode()


@pytest.fixture
def receiver() -> dict[str, Any]:
    return documented_receiver()


def test_a_signed_fresh_delivery_is_taken_once(receiver: dict[str, Any]) -> None:
    seen: set[str] = set()
    applied: list[Any] = []
    header = signature(SECRET, BODY, int(time.time()))
    assert receiver["verify"](SECRET, header, BODY, seen)["deliveryId"] == "wh_1.1-3"  # positive control
    assert receiver["handle"](SECRET, header, BODY, seen, applied.extend) == 200
    assert applied == [{"seq": 2, "kind": "created"}] and seen == {"wh_1.1-3"}
    again = signature(SECRET, BODY, int(time.time()))  # the server sending it again after a crash
    assert receiver["verify"](SECRET, again, BODY, seen) is None
    assert receiver["handle"](SECRET, again, BODY, seen, applied.extend) == 200 and len(applied) == 1


def _now() -> int:
    return int(time.time())


# Each forgery made when its test runs (the ids stay the same on every worker).
FORGERIES: dict[str, Callable[[], tuple[str, bytes]]] = {
    "another secret": lambda: (signature("whsec_" + "x" * 43, BODY, _now()), BODY),
    "body changed": lambda: (signature(SECRET, BODY, _now()), BODY.replace(b'"seq": 2', b'"seq": 9')),
    "time changed": lambda: (signature(SECRET, BODY, _now()).replace("t=", "t=1"), BODY),
    "no signature": lambda: (f"t={_now()}", BODY),
    "no header": lambda: ("", BODY),
    "malformed": lambda: ("t=soon,v1=00", BODY),
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_forged_delivery_is_refused(receiver: dict[str, Any], forgery: str) -> None:
    header, body = FORGERIES[forgery]()
    applied: list[Any] = []
    assert receiver["handle"](SECRET, header, body, set(), applied.extend) == 401 and applied == []
    genuine = signature(SECRET, BODY, _now())  # positive control: the genuine delivery is taken
    assert receiver["handle"](SECRET, genuine, BODY, set(), applied.extend) == 200 and len(applied) == 1


def test_an_old_signature_is_refused_as_a_replay(receiver: dict[str, Any]) -> None:
    old = signature(SECRET, BODY, int(time.time()) - 301)
    with pytest.raises(PermissionError, match="replayed"):
        receiver["verify"](SECRET, old, BODY, set())
    fresh = signature(SECRET, BODY, int(time.time()) - 5)
    assert receiver["verify"](SECRET, fresh, BODY, set()) is not None  # positive control: within tolerance


@pytest.fixture
def endpoint() -> Iterator[Receiver]:
    with Receiver() as taking:
        yield taking


def test_a_captured_real_delivery_replayed_is_never_applied_twice(
    server: LiveServer, endpoint: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    with server.client(server.key(role="admin")) as admin:
        _register(admin, endpoint)
        _write(admin, 3)
    wait_for(lambda: len(endpoint.applied) == 3)
    header, body = endpoint.raw[0]
    assert endpoint.handle(header, body, "replay") == 200  # within the tolerance: a seen id
    assert endpoint.counts["seen_again"] == 1 and len(endpoint.applied) == 3
    tampered = body.replace(b'"kind":"created"', b'"kind":"deleted"', 1)
    assert tampered != body and endpoint.handle(header, tampered, "forged") == 401
    server_time = time.time()
    monkeypatch.setattr(time, "time", lambda: server_time + 600)  # the same request, ten minutes on
    assert endpoint.handle(header, body, "late replay") == 401
    assert endpoint.counts["refused"] == 2 and len(endpoint.applied) == 3


def test_a_call_cut_short_by_its_sender_is_counted_torn_not_forged(endpoint: Receiver) -> None:
    """A sender killed mid-call (the fault test's SIGKILL) leaves a body shorter than its length."""
    endpoint.secret = SECRET
    head = f"POST /hook HTTP/1.1\r\nHost: x\r\nEngramDB-Signature: {signature(SECRET, BODY, _now())}\r\n"
    with socket.create_connection(("127.0.0.1", endpoint.port)) as torn:
        torn.sendall(f"{head}Content-Length: {len(BODY)}\r\n\r\n".encode() + BODY[:10])
        torn.shutdown(socket.SHUT_WR)
        torn.recv(1024)  # the receiver closes without an answer
    with socket.create_connection(("127.0.0.1", endpoint.port)) as whole:  # positive control: the whole call
        whole.sendall(f"{head}Content-Length: {len(BODY)}\r\n\r\n".encode() + BODY)
        assert whole.recv(1024).startswith(b"HTTP/1.0 200")
    assert endpoint.counts["torn"] == 1 and endpoint.counts["refused"] == 0 and endpoint.counts["calls"] == 1
