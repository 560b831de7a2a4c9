"""Faults behind every route answer problem JSON with a stable code, and nothing of the cause.

A failing embedder (an OpenAI-compatible endpoint on loopback answering 500, or an embedder with a
bug), a store whose table is gone, and a store locked by another writer: each route answers JSON
with a ``code`` a client can act on; a 5xx names the request id the log holds the traceback by;
no driver text, SQL or table name reaches the client. Once, a recall whose embedder failed
answered 500 text/plain "Internal Server Error".
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engramdb.config import Settings
from engramdb.core.auth import PERMISSIONS
from engramdb.core.embedding import HashingEmbedder, make_embedder
from engramdb.models.operations import OPERATIONS
from engramdb.storage.port import Store
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body
from tests.stores import as_postgres
from tests.surfaces.requests import Checker, example_request

KNOWN_CODES = {
    "invalid_input",
    "unauthenticated",
    "forbidden",
    "not_found",
    "conflict",
    "backend_unavailable",
    "embedding_failed",
    "internal",
    "model_not_configured",
}
# With no chat model configured (as here), these answer 501 model_not_configured (tests/assist covers them).
NEEDS_MODEL = {"extract", "queue_extraction", "reflect", "consolidate", "add"}
DRIVER_WORDS = ("sqlite", "no such table", "memories", "psycopg", "relation", "sqlstate", "traceback", "select ")
TOUCH_MEMORIES = ("write_episode", "write_fact", "get_episode", "get_fact", "list_episodes", "list_facts", "recall")


class _Failing(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def failing_endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


class _BuggyEmbedder(HashingEmbedder):
    """An embedder with a bug (a third-party model raising what it should not)."""

    def embed(self, texts: Any) -> np.ndarray:
        raise ZeroDivisionError("a bug deep inside the model")


def _serve(tmp_path: Path, embedder: Any, store: Store | None = None) -> LiveServer:
    settings = Settings(home=tmp_path / "home", embedder="hashing", embed_poll_seconds=0.05)
    server = LiveServer(settings, store or SQLiteStore(settings.home), embedder)
    server.start()
    return server


def _problem(answer: Any) -> dict[str, Any]:
    assert answer.headers["content-type"] == "application/json", (answer.status_code, answer.text)
    body = dict(answer.json())
    assert body["code"] in KNOWN_CODES and body["message"], body
    assert not any(word in answer.text.lower() for word in DRIVER_WORDS), answer.text
    return body


def test_a_failing_embedding_endpoint_is_a_502_problem_and_writes_still_land(
    tmp_path: Path, failing_endpoint: str
) -> None:
    server = _serve(tmp_path, make_embedder(f"openai:{failing_endpoint}|m"))
    try:
        with server.client(server.key()) as http:
            written = http.post("/v1/episodes", json=episode_body("Staging is in Frankfurt"))
            assert written.status_code == 201  # positive control: the write path never waits on the model
            answer = http.post("/v1/recall", json={"query": "where is staging"})
            assert answer.status_code == 502
            body = _problem(answer)
            assert (body["code"], body["retryable"]) == ("embedding_failed", True) and body["requestId"]
            assert answer.headers["x-request-id"] == body["requestId"]
    finally:
        server.stop()


def test_every_route_with_a_failing_embedder_answers_as_documented(tmp_path: Path, failing_endpoint: str) -> None:
    """Only what embeds a query fails (502 embedding_failed); every answer matches the document."""
    server = _serve(tmp_path, make_embedder(f"openai:{failing_endpoint}|m"))
    try:
        with server.client(None) as http:
            check = Checker(http.get("/openapi.json").json())
        answers = _answers(server)
        for name, answer in answers.items():
            check(name, answer)
            if answer.status_code >= 400:
                _problem(answer)
        failed = {name for name, answer in answers.items() if answer.status_code >= 500 and answer.status_code != 501}
        # recall and a ranked fact search embed their query (search_facts documents its 502 too).
        assert failed == {"recall", "search_facts"}, {n: answers[n].status_code for n in failed}
        assert {name for name, answer in answers.items() if answer.status_code == 501} == NEEDS_MODEL
        assert answers["recall"].json()["code"] == answers["search_facts"].json()["code"] == "embedding_failed"
    finally:
        server.stop()


def test_an_unexpected_exception_is_a_500_problem_logged_under_its_request_id(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = _serve(tmp_path, _BuggyEmbedder())
    try:
        with server.client(server.key()) as http, caplog.at_level(logging.ERROR):
            assert http.post("/v1/episodes", json=episode_body("Staging is in Frankfurt")).status_code == 201
            answer = http.post("/v1/recall", json={"query": "where is staging"})
            assert answer.status_code == 500  # once: text/plain "Internal Server Error"
            body = _problem(answer)
            assert body["code"] == "internal" and "bug" not in answer.text
        logged = [r for r in caplog.records if body["requestId"] in r.getMessage()]
        assert logged and logged[0].exc_info and logged[0].exc_info[0] is ZeroDivisionError
    finally:
        server.stop()


def _key_for(server: LiveServer, op: Any, agent: str, admin: str) -> str:
    return agent if "agent" in PERMISSIONS[op.permission].roles else admin


def _answers(server: LiveServer) -> dict[str, Any]:
    agent, admin = server.key(), server.key(role="admin")
    server.key(role="admin")  # a second admin, so revoking one is not refused as the last
    answers = {}
    for op in OPERATIONS:
        with server.client(None if op.public else _key_for(server, op, agent, admin)) as http:
            answers[op.name] = http.request(**example_request(op))
    return answers


def _break(store: Store) -> None:
    """Take the memories table away under the live store (as a botched migration would)."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.home / "tenants" / "t1.sqlite3") as conn:
            conn.execute("ALTER TABLE memories RENAME TO memories_gone")
        return
    import psycopg

    pg = as_postgres(store)
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {pg.schema}.memories RENAME TO memories_gone")


def test_every_route_over_a_broken_store_answers_problem_json(server: LiveServer) -> None:
    healthy = _answers(server)
    assert all(a.status_code < 500 or (n in NEEDS_MODEL and a.status_code == 501) for n, a in healthy.items()), {
        n: a.text for n, a in healthy.items()
    }
    _break(server.store)
    broken = _answers(server)
    with server.client(None) as http:
        check = Checker(http.get("/openapi.json").json())
    for name, answer in broken.items():
        check(name, answer)  # every answer, 500s included, is one the document describes
        if answer.status_code >= 400:
            _problem(answer)
    failed = {name for name, answer in broken.items() if answer.status_code == 500}
    assert set(TOUCH_MEMORIES) <= failed, {n: broken[n].status_code for n in TOUCH_MEMORIES}
    for name in failed:
        body = broken[name].json()
        assert body["code"] == "internal" and body["requestId"] and body["retryable"] is False, (name, body)
    assert broken["health"].status_code == 200 and broken["list_keys"].status_code == 200  # untouched tables


def test_a_locked_store_answers_503_retryable_on_every_write(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "home", busy_timeout=0.2)
    server = _serve(tmp_path, HashingEmbedder(), store)
    try:
        agent = server.key()
        with server.client(agent) as http:
            assert http.post("/v1/episodes", json=episode_body("before the lock")).status_code == 201
            holder = sqlite3.connect(tmp_path / "home" / "tenants" / "t1.sqlite3", isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")  # another process writing, for longer than the timeout
            try:
                locked = http.post("/v1/episodes", json=episode_body("during the lock"))
                assert locked.status_code == 503
                Checker(http.get("/openapi.json").json())("write_episode", locked)
                body = _problem(locked)
                assert (body["code"], body["retryable"]) == ("backend_unavailable", True)
                assert http.post("/v1/recall", json={"query": "before the lock"}).status_code == 200  # reads go on
            finally:
                holder.execute("ROLLBACK")
                holder.close()
            assert http.post("/v1/episodes", json=episode_body("during the lock")).status_code == 201  # retried: taken
    finally:
        server.stop()


def test_over_mcp_a_failing_embedder_is_a_tool_error_with_its_code(tmp_path: Path, failing_endpoint: str) -> None:
    import anyio
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    server = _serve(tmp_path, make_embedder(f"openai:{failing_endpoint}|m"))
    key = server.key()

    async def ask() -> Any:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
            async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client:
                listed = await client.call_tool("list_facts", {})
                assert not listed.is_error  # positive control: the same session works without the model
                return await client.call_tool("recall", {"query": "where is staging"})

    try:
        result = anyio.run(ask)
        assert result.is_error and result.structured_content is not None
        assert result.structured_content["code"] == "embedding_failed"
    finally:
        server.stop()
