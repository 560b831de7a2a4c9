"""A recall that reaches an otherwise idle embedded server runs on its event loop (api/guard.py,
api/routes.py): the same answer as on a worker thread, and only when nothing else is being served,
the scope's copy is held, and the store and the model are in this process."""

from __future__ import annotations

import socket
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb.config import Settings
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder, OnnxMiniLMEmbedder, OpenAICompatibleEmbedder, runs_in_process
from engramdb.core.service import MemoryService
from engramdb.models.recall import RecallRequest
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields

SCOPE = scope_fields()
QUESTION = {"query": "which language does the billing service use", "scope": SCOPE, "explain": True}


def _inline_recalls(server: LiveServer) -> float:
    """How many recalls this process has answered on an event loop (the counter is the process's)."""
    for line in httpx.get(f"{server.url}/metrics", timeout=30).text.splitlines():
        if line.startswith('engram_http_inline_total{operation="recall"}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def _answer(http: httpx.Client, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The recalled memories in order, numbers to 6 places (recency moves by ~1e-10 between two calls)."""
    response = http.post("/v1/recall", json=body)
    assert response.status_code == 200, response.text
    return [_rounded(m) for m in response.json()["memories"]]


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _embedded(http: httpx.Client) -> list[dict[str, Any]]:
    """The recall once every turn has its vector: all three found by the dense arm (the lunch turn shares
    no word with the question), so the answer stops changing."""
    deadline = time.monotonic() + 30
    answer = _answer(http, QUESTION)
    while (
        not (len(answer) == 3 and all("dense" in m["explain"]["arms"] for m in answer)) and time.monotonic() < deadline
    ):
        time.sleep(0.05)
        answer = _answer(http, QUESTION)
    return answer


def _write_turns(http: httpx.Client) -> None:
    for turn, (user, assistant) in enumerate(
        [
            ("The billing service is written in TypeScript.", "Noted."),
            ("We moved billing to Go last week.", "Understood, Go it is."),
            ("Lunch was ramen today.", "Enjoy."),
        ]
    ):
        assert http.post("/v1/episodes", json=episode_body(user, assistant, turn=turn, scope=SCOPE)).status_code == 201


def test_a_recall_alone_on_a_held_scope_runs_on_the_loop_and_answers_as_a_worker_thread_does(
    server: LiveServer, backend: str
) -> None:
    token = server.key(role="admin")
    with server.client(token) as http:
        _write_turns(http)
        first = _embedded(http)  # the scope's copy is held from now on
        before = _inline_recalls(server)
        alone = _answer(http, QUESTION)
        after_alone = _inline_recalls(server)
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as held:
            # Another request in flight: its head sent, its body never, so the server is still serving it.
            held.sendall(
                f"POST /v1/recall HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                f"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n".encode()
            )
            time.sleep(0.2)  # its head is read
            beside = _answer(http, QUESTION)
            after_beside = _inline_recalls(server)
    assert len(alone) == 3 and all("dense" in m["explain"]["arms"] for m in alone), alone
    assert alone == beside == first  # the same memories, texts, scores and explain either way
    if backend == "sqlite":
        assert after_alone == before + 1  # answered on the loop
    else:
        assert after_alone == before  # a database server is never waited on from the loop
    assert after_beside == after_alone  # with another request in flight: on a worker thread


def test_the_first_recall_of_a_scope_builds_its_copy_on_a_worker_thread(live: LiveServer) -> None:
    with live.client(live.key(role="admin")) as http:
        _write_turns(http)
        other = {**QUESTION, "scope": scope_fields(agentId="elsewhere")}
        before = _inline_recalls(live)
        cold = _answer(http, other)  # no copy of this scope yet: building one may take seconds
        after_cold = _inline_recalls(live)
        warm = _answer(http, other)  # control: the same recall once the copy is held
        after_warm = _inline_recalls(live)
    assert cold == warm
    assert after_cold == before
    assert after_warm == before + 1


def test_only_a_model_in_this_process_lets_a_recall_run_on_the_loop(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    store = SQLiteStore(settings.home)
    operator = Caller(tenant="t1", key_id="test-operator", role="admin")
    store.tenant("t1", create=True)
    service = MemoryService(store, HashingEmbedder(), settings)
    question = RecallRequest.model_validate(QUESTION)
    assert not service.reads.recall_is_short(operator, question)  # the scope's copy is not held yet
    service.reads.recall(operator, question)
    assert service.reads.recall_is_short(operator, question)  # now it is, and the model is here
    remote = MemoryService(store, OpenAICompatibleEmbedder("http://127.0.0.1:9", "m"), settings)
    assert not remote.reads.recall_is_short(operator, question)  # its model is a server away (never called)
    assert runs_in_process(HashingEmbedder()) and runs_in_process(OnnxMiniLMEmbedder())
    assert not runs_in_process(OpenAICompatibleEmbedder("http://127.0.0.1:9", "m"))


@pytest.mark.postgres
def test_a_database_server_is_never_waited_on_from_the_loop(pg_url: str, tmp_path: Path) -> None:
    """Even a scope PostgreSQL answers from a copy held here (every scope, at copy_min_rows=1)."""
    from engramdb.storage.postgres.store import PostgresStore

    store = PostgresStore(pg_url, schema=f"t_{uuid.uuid4().hex[:12]}", copy_min_rows=1)
    settings = Settings(home=tmp_path / "home", embedder="hashing", embed_poll_seconds=0.05)
    server = LiveServer(settings, store, HashingEmbedder())
    server.start()
    try:
        token = server.key(role="admin")
        with server.client(token) as http:
            _write_turns(http)
            _embedded(http)
            before = _inline_recalls(server)
            assert len(_answer(http, QUESTION)) == 3
            after = _inline_recalls(server)
        caller = auth.authenticate(store, token)
        short = server.app.state.service.reads.recall_is_short(caller, RecallRequest.model_validate(QUESTION))
    finally:
        server.stop()
    assert short  # control: the copy is held and the model is here, so only the store keeps it off the loop
    assert after == before
