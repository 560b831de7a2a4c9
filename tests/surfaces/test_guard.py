"""The guard in front of the routes: body limit before parsing, the key before the body, caps on
grants and policy, validated settings (issue 21)."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body

LIMIT = 64 * 1024


@pytest.fixture
def small(tmp_path: Path) -> Iterator[LiveServer]:
    """A server whose body limit is 64 KiB, so a test need not send megabytes."""
    settings = Settings(home=tmp_path / "home", embedder="hashing", max_body_bytes=LIMIT)
    server = LiveServer(settings, SQLiteStore(settings.home), HashingEmbedder())
    server.start()
    yield server
    server.stop()


def _too_large(answer: object) -> None:
    body = answer.json()  # type: ignore[attr-defined]
    assert answer.status_code == 413, answer.text  # type: ignore[attr-defined]
    assert body["code"] == "payload_too_large" and body["field"] == "body" and str(LIMIT) in body["message"]
    assert body["requestId"] == answer.headers["x-request-id"]  # type: ignore[attr-defined]


def test_a_declared_body_over_the_limit_is_refused(small: LiveServer) -> None:
    with small.client(small.key()) as http:
        padded = episode_body("x" * (LIMIT // 2), "y" * (LIMIT // 2))
        _too_large(http.post("/v1/episodes", json=padded))
        assert http.post("/v1/episodes", json=episode_body()).status_code == 201  # control: under it


def test_a_streamed_body_is_cut_off_at_the_limit(small: LiveServer) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: sent chunked, the size unknown until read
        yield b'{"query": "'
        for _ in range(LIMIT // 1024 + 2):
            yield b"a" * 1024
        yield b'"}'

    with small.client(small.key()) as http:
        _too_large(http.post("/v1/recall", content=chunks(), headers={"content-type": "application/json"}))
        small_chunks = iter([b'{"query": ', b'"typescript"}'])
        answer = http.post("/v1/recall", content=small_chunks, headers={"content-type": "application/json"})
        assert answer.status_code == 200, answer.text  # control: a short streamed body is read


def _raw_headers(
    server: LiveServer,
    headers: dict[str, str],
    path: str = "/v1/recall",
    content_type: str = "application/json",
    length: int = 60000,
) -> bytes:
    """Send only the head of a POST declaring a body of ``length`` bytes, never the body; return the answer."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {length}\r\n{head}\r\n".encode()
        )
        answer = b""
        try:
            while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _length(answer):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except TimeoutError:
            pass
        return answer


def _length(answer: bytes) -> int:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 0


def test_the_key_is_checked_before_the_body_is_read(small: LiveServer) -> None:
    # Without a key the answer comes before any of the body is sent: nothing was read or parsed.
    answer = _raw_headers(small, {})
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["code"] == "unauthenticated"
    wrong = _raw_headers(small, {"Authorization": "Bearer egm.t1.nokey.nosecret"})
    assert wrong.startswith(b"HTTP/1.1 401"), wrong[:200]
    # Control: with a valid key the server waits for the body it was promised (no answer yet).
    assert _raw_headers(small, {"Authorization": f"Bearer {small.key()}"}) == b""


def test_a_dashboard_part_checks_the_key_and_the_size_before_reading_a_form(small: LiveServer) -> None:
    form = "application/x-www-form-urlencoded"
    # Issue 30: an anonymous 12 MiB form posted to /ui/part/recall was parsed before authentication.
    anonymous = _raw_headers(small, {}, path="/ui/part/recall", content_type=form)
    assert anonymous.startswith(b"HTTP/1.1 401"), anonymous[:200]
    huge = _raw_headers(small, {}, path="/ui/part/recall", content_type=form, length=12 * 1024 * 1024)
    assert huge.startswith(b"HTTP/1.1 413"), huge[:200]
    # Control: with a valid key the server waits for the form it was promised (no answer yet).
    key = {"Authorization": f"Bearer {small.key()}"}
    assert _raw_headers(small, key, path="/ui/part/recall", content_type=form) == b""


def _guarded_server(tmp_path: Path, **limits: Any) -> LiveServer:
    settings = Settings(home=tmp_path / "home", embedder="hashing", **limits)
    server = LiveServer(settings, SQLiteStore(settings.home), HashingEmbedder())
    server.start()
    return server


def test_dashboard_parts_count_against_the_key_rate(tmp_path: Path) -> None:
    # Issue 30: the dashboard's parts bypassed the per-key rate limit.
    server = _guarded_server(tmp_path, rate_limit_per_second=0.01, rate_limit_burst=2)
    try:
        with server.client(server.key()) as http:
            answers = [http.get("/ui/part/counts").status_code for _ in range(3)]
            assert answers[:2] == [200, 200] and answers[2] == 429, answers  # the burst, then the limit
            assert http.get("/v1/facts").status_code == 429  # one budget for the key, parts and REST alike
        with server.client(server.key()) as http:
            assert http.get("/ui/part/counts").status_code == 200  # control: another key has its own
    finally:
        server.stop()


def test_dashboard_parts_count_against_the_requests_at_once(tmp_path: Path) -> None:
    # Issue 30: the dashboard's parts bypassed ENGRAM_MAX_IN_FLIGHT. No rate limit here: the loop
    # below asks until the held requests are in, however long a busy machine takes to let them in.
    server = _guarded_server(tmp_path, max_in_flight=1)
    try:
        other = server.key()
        host, port = server.url.removeprefix("http://").split(":")
        # Two requests of tenants of their own, held open (their heads sent, their bodies never): a
        # recall, and a dashboard part, so a part in flight is counted too. Past the limit of one, a
        # tenant with nothing in flight is still served, up to twice the limit.
        holders = {
            server.key(tenant="holder1"): ("/v1/recall", "application/json"),
            server.key(tenant="holder2"): ("/ui/part/recall", "application/x-www-form-urlencoded"),
        }
        with ExitStack() as held, server.client(other) as http:
            assert http.get("/ui/part/counts").status_code == 200  # control: served while nothing is held

            def hold(holder: str) -> socket.socket:
                path, content_type = holders[holder]
                connection = held.enter_context(socket.create_connection((host, int(port)), timeout=5))
                connection.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {holder}\r\n"
                    f"Content-Type: {content_type}\r\nContent-Length: 100\r\n\r\n".encode()
                )
                return connection

            heads = {holder: hold(holder) for holder in holders}
            deadline = time.monotonic() + 30
            refused = http.get("/ui/part/counts")
            while refused.status_code != 503 and time.monotonic() < deadline:  # the held heads are on their way
                for holder, connection in heads.items():
                    if _answered(connection):  # refused while the other was in flight
                        connection.close()
                        heads[holder] = hold(holder)
                time.sleep(0.05)
                refused = http.get("/ui/part/counts")
            assert refused.status_code == 503 and refused.json()["code"] == "overloaded"
    finally:
        server.stop()


def test_a_grant_longer_than_a_write_may_be_is_refused(server: LiveServer) -> None:
    with server.client(server.key(role="admin")) as http:
        grant = {"agentId": "a" * 129, "profileId": "default"}
        answer = http.post("/v1/keys", json={"role": "host", "grant": grant})
        assert answer.status_code == 422 and answer.json()["field"] == "agentId", answer.text
        grant["agentId"] = "a" * 128
        assert http.post("/v1/keys", json={"role": "host", "grant": grant}).status_code == 201  # control


def test_policy_kinds_are_bounded(server: LiveServer) -> None:
    with server.client(server.key(role="admin")) as http:
        policy = http.get("/v1/policy").json()
        for kinds in (["k" * 65], [""], [f"k{i}" for i in range(1001)]):
            answer = http.put("/v1/policy", json={**policy, "multiValuedKinds": kinds})
            assert answer.status_code == 422, answer.text
            assert answer.json()["field"] == "multiValuedKinds"
        answer = http.put("/v1/policy", json={**policy, "multiValuedKinds": ["k" * 64]})
        assert answer.status_code == 200 and answer.json()["multiValuedKinds"] == ["k" * 64]  # control


def test_settings_are_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_SQLITE_SYNCHRONOUS", "FUL")
    with pytest.raises(ValidationError, match="sqlite_synchronous"):
        Settings()
    monkeypatch.setenv("ENGRAM_SQLITE_SYNCHRONOUS", "full")
    assert Settings().sqlite_synchronous == "FULL"
    monkeypatch.setenv("ENGRAM_MAX_BODY_BYTES", "10")
    with pytest.raises(ValidationError, match="max_body_bytes"):
        Settings()


def test_past_its_limit_of_requests_at_once_the_server_refuses_at_once(tmp_path: Path) -> None:
    server = _guarded_server(tmp_path, max_in_flight=1)
    try:
        token = server.key()
        host, port = server.url.removeprefix("http://").split(":")
        head = (
            f"POST /v1/recall HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n".encode()
        )
        with ExitStack() as stack:
            # One request in flight: its head sent, its body never, so the server is still serving it.
            held = stack.enter_context(socket.create_connection((host, int(port)), timeout=5))
            held.sendall(head)
            with server.client(token) as http:
                deadline = time.monotonic() + 10
                refused = http.get("/v1/facts")
                while refused.status_code != 503 and time.monotonic() < deadline:  # the head is on its way
                    if _answered(held):  # refused: one of the key's requests was in flight
                        held.close()
                        held = stack.enter_context(socket.create_connection((host, int(port)), timeout=5))
                        held.sendall(head)
                    refused = http.get("/v1/facts")
                assert refused.status_code == 503, refused.text
                assert refused.json()["code"] == "overloaded" and refused.headers["retry-after"] == "1"
                assert httpx.get(f"{server.url}/healthz").status_code == 200  # health is not counted
        with server.client(token) as http:  # control: with the held request gone, it is served again
            deadline = time.monotonic() + 10
            answer = http.get("/v1/facts")
            while answer.status_code == 503 and time.monotonic() < deadline:
                answer = http.get("/v1/facts")
            assert answer.status_code == 200
    finally:
        server.stop()


def _answered(connection: socket.socket) -> bool:
    """Whether the server has answered (or closed) a held request's connection."""
    poller = select.poll()
    poller.register(connection, select.POLLIN)
    return bool(poller.poll(0))
