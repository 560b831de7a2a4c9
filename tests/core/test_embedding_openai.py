"""The OpenAI-compatible embedder against a real loopback HTTP server, its failures included."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from engramdb.config import Settings
from engramdb.core.auth import Caller
from engramdb.core.beside import Beside, beside
from engramdb.core.embedding import OpenAICompatibleEmbedder, make_embedder
from engramdb.core.service import MemoryService
from engramdb.errors import EmbeddingFailedError, EngramError
from engramdb.models.recall import RecallRequest
from engramdb.storage.port import Store
from tests.factories import scope_fields


def _raw_vector(text: str) -> list[float]:
    """A distinct, deterministic, unnormalised 3-d vector per text."""
    return [float(len(text)), float(sum(map(ord, text)) % 97), 3.0]


@dataclass
class ScriptedServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)


Responder = Callable[[dict[str, Any]], tuple[int, Any]]  # bytes are sent as they are, anything else as JSON


def _embeddings_response(body: dict[str, Any]) -> tuple[int, Any]:
    data = [{"object": "embedding", "index": i, "embedding": _raw_vector(text)} for i, text in enumerate(body["input"])]
    # Out of index order on purpose: the client must sort by `index`.
    return 200, {"object": "list", "model": body["model"], "data": data[::-1]}


@pytest.fixture
def serve() -> Iterator[Callable[[Responder], ScriptedServer]]:
    servers: list[ThreadingHTTPServer] = []

    def start(responder: Responder) -> ScriptedServer:
        scripted = ScriptedServer(url="")

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                scripted.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, reply = responder(body)
                payload = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output quiet

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        scripted.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        return scripted

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_openai_embeds_in_index_order(serve: Callable[[Responder], ScriptedServer]) -> None:
    server = serve(_embeddings_response)
    texts = ["alpha", "bb", "a much longer third input", "d"]
    with OpenAICompatibleEmbedder(server.url, "emb-model", api_key="sk-test") as embedder:
        vectors = embedder.embed(texts)
        assert embedder.dimension == 3
    raw = np.array([_raw_vector(t) for t in texts], dtype=np.float32)
    expected = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    assert vectors.shape == (4, 3)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, expected, atol=1e-6)

    [request] = server.requests
    assert request["path"] == "/v1/embeddings"
    assert request["body"] == {"model": "emb-model", "input": texts}
    assert request["headers"]["Authorization"] == "Bearer sk-test"


def test_openai_no_auth_header_without_key(serve: Callable[[Responder], ScriptedServer]) -> None:
    server = serve(_embeddings_response)
    with OpenAICompatibleEmbedder(server.url + "/", "m") as embedder:
        embedder.embed(["x"])
    assert "Authorization" not in server.requests[0]["headers"]
    assert server.requests[0]["path"] == "/v1/embeddings"


def test_openai_batches_requests(serve: Callable[[Responder], ScriptedServer]) -> None:
    server = serve(_embeddings_response)
    texts = [f"text {i}" * (i + 1) for i in range(5)]
    with OpenAICompatibleEmbedder(server.url, "m", batch_size=2) as embedder:
        vectors = embedder.embed(texts)
    assert [r["body"]["input"] for r in server.requests] == [texts[0:2], texts[2:4], texts[4:]]
    for i, text in enumerate(texts):
        raw = np.array(_raw_vector(text), dtype=np.float32)
        np.testing.assert_allclose(vectors[i], raw / np.linalg.norm(raw), atol=1e-6)


def test_openai_dimension_probe_is_lazy(serve: Callable[[Responder], ScriptedServer]) -> None:
    server = serve(_embeddings_response)
    with OpenAICompatibleEmbedder(server.url, "m") as embedder:
        assert server.requests == []  # construction sends nothing
        assert embedder.dimension == 3
        assert len(server.requests) == 1
        assert embedder.embed([]).shape == (0, 3)
        assert len(server.requests) == 1  # dimension cached


def test_openai_zero_vector_stays_zero(serve: Callable[[Responder], ScriptedServer]) -> None:
    server = serve(lambda body: (200, {"data": [{"index": 0, "embedding": [0.0, 0.0]}]}))
    with OpenAICompatibleEmbedder(server.url, "m") as embedder:
        vectors = embedder.embed(["x"])
    np.testing.assert_array_equal(vectors, np.zeros((1, 2), dtype=np.float32))


@pytest.mark.parametrize(("status", "retryable"), [(500, True), (503, True), (429, True), (400, False), (401, False)])
def test_openai_http_errors(serve: Callable[[Responder], ScriptedServer], status: int, retryable: bool) -> None:
    server = serve(lambda body: (status, {"error": {"message": "scripted failure"}}))
    with OpenAICompatibleEmbedder(server.url, "m") as embedder:
        with pytest.raises(EmbeddingFailedError) as info:
            embedder.embed(["x"])
    assert info.value.retryable is retryable
    assert str(status) in str(info.value)
    assert info.value.__cause__ is not None


def test_openai_connection_refused_is_retryable() -> None:
    # Bind-then-close gives a loopback port with nothing listening.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead_port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{dead_port}/v1"
    with OpenAICompatibleEmbedder(url, "m", timeout=2.0) as embedder:
        with pytest.raises(EmbeddingFailedError) as info:
            embedder.embed(["x"])
    assert info.value.retryable is True
    assert info.value.__cause__ is not None


@pytest.mark.parametrize(
    "reply",
    [
        {"nope": []},
        {"data": [{"index": 0}]},
        {"data": []},
        {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0]}]},
    ],
)
def test_openai_malformed_response_not_retryable(serve: Callable[[Responder], ScriptedServer], reply: Any) -> None:
    server = serve(lambda body: (200, reply))
    with OpenAICompatibleEmbedder(server.url, "m") as embedder:
        with pytest.raises(EmbeddingFailedError) as info:
            embedder.embed(["x"])
    assert info.value.retryable is False


def _slow(body: dict[str, Any]) -> tuple[int, Any]:
    time.sleep(1.0)
    return _embeddings_response(body)


@pytest.mark.parametrize(
    ("name", "responder", "retryable"),
    [
        ("HTTP 500", lambda body: (500, {"error": {"message": "model crashed"}}), True),
        ("HTTP 500 with a garbage body", lambda body: (500, b"\x00<html>oops"), True),
        ("garbage with HTTP 200", lambda body: (200, b"\x00<html>not json"), False),
        ("no answer within the timeout", _slow, True),
    ],
)
def test_a_failing_endpoint_is_an_embedding_failed_error(
    serve: Callable[[Responder], ScriptedServer], name: str, responder: Responder, retryable: bool
) -> None:
    """Each failure of a real loopback endpoint is a 502 in the error tree, retryable as it should be,
    with the endpoint's URL kept out of the error's body."""
    healthy = serve(_embeddings_response)
    with OpenAICompatibleEmbedder(healthy.url, "m", timeout=0.3) as embedder:
        assert embedder.embed(["x"]).shape == (1, 3)  # positive control: the client works
    server = serve(responder)
    with OpenAICompatibleEmbedder(server.url, "m", timeout=0.3) as embedder:
        with pytest.raises(EngramError) as info:
            embedder.embed(["x"])
    error = info.value
    assert isinstance(error, EmbeddingFailedError), name
    assert (error.code, error.http_status, error.retryable) == ("embedding_failed", 502, retryable)
    assert server.requests and "127.0.0.1" in server.url  # positive control: the failing call went there
    assert "127.0.0.1" not in json.dumps(error.to_dict())  # ... and the answer does not say where
    assert error.__cause__ is not None  # chained: the log has the library's own account


def test_make_embedder_openai(serve: Callable[[Responder], ScriptedServer]) -> None:
    server = serve(_embeddings_response)
    embedder = make_embedder(f"openai:{server.url}|text-embedding-3-small", api_key="k1")
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    try:
        assert embedder.base_url == server.url
        assert embedder.model == "text-embedding-3-small"
        embedder.embed(["hello"])
    finally:
        embedder.close()
    request = server.requests[0]
    assert request["body"]["model"] == "text-embedding-3-small"
    assert request["headers"]["Authorization"] == "Bearer k1"


def test_a_recall_whose_embedding_endpoint_fails_raises_the_502(
    serve: Callable[[Responder], ScriptedServer], store: Store, settings: Settings
) -> None:
    """The failure reaches the caller as EmbeddingFailedError (a 502 in the tree), on both backends."""
    caller = Caller(tenant="t1", key_id="test-operator", role="admin")
    store.tenant("t1", create=True)
    request = RecallRequest.model_validate({"query": "vim", "scope": scope_fields()})
    with OpenAICompatibleEmbedder(serve(_embeddings_response).url, "m") as healthy:
        assert MemoryService(store, healthy, settings).reads.recall(caller, request).memories == []  # positive control
    with OpenAICompatibleEmbedder(serve(lambda body: (503, b"busy")).url, "m") as failing:
        with pytest.raises(EmbeddingFailedError) as info:
            MemoryService(store, failing, settings).reads.recall(caller, request)
    assert (info.value.http_status, info.value.retryable) == (502, True)


def test_a_request_does_not_start_the_work_a_recall_set_beside_it(
    serve: Callable[[Responder], ScriptedServer],
) -> None:
    """Its reads would hold a PostgreSQL reading block's connection through the network wait."""
    server = serve(_embeddings_response)
    began = threading.Event()

    def lexical_arm() -> str:
        began.set()
        return threading.current_thread().name

    work = Beside(lexical_arm)
    with OpenAICompatibleEmbedder(server.url, "embed-small") as embedder, beside(work):
        embedder.embed(["when is the dentist"])
        assert server.requests and not began.wait(0.2)
        assert work.result() == threading.current_thread().name  # control: it runs, on the recall's thread
