"""Watching the server (issue 21): /metrics read by Prometheus's own text parser, a request id in
the JSON log line and the error body alike, and a key over its rate limit answered 429."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from engramdb.config import Settings
from engramdb.core import auth
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields


def _samples(server: LiveServer) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    answer = httpx.get(f"{server.url}/metrics", timeout=30)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    found = {}
    for family in text_string_to_metric_families(answer.text):  # raises on anything not the format
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def _value(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_metrics_are_prometheus_text_that_counts_what_happened(server: LiveServer) -> None:
    before = _samples(server)
    with server.client(server.key()) as http:
        assert http.post("/v1/episodes", json=episode_body("Deploys go out on Fridays.")).status_code == 201
        assert http.post("/v1/recall", json={"query": "when do deploys go out"}).status_code == 200
        assert http.get("/v1/facts/" + "0" * 64).status_code == 404
        assert http.post("/v1/episodes", json=episode_body(turnIndex=-1)).status_code == 422
    after = _samples(server)

    def grew(name: str, by: float = 1, **labels: str) -> bool:
        return _value(after, name, **labels) - _value(before, name, **labels) == by

    assert grew("engram_http_requests_total", route="/v1/recall", method="POST", status="200")
    assert grew("engram_http_requests_total", route="/v1/episodes", method="POST", status="201")
    assert grew("engram_http_requests_total", route="/v1/facts/{fact_id}", method="GET", status="404")
    assert grew("engram_http_request_duration_seconds_count", route="/v1/recall", method="POST")
    assert grew("engram_http_errors_total", code="not_found") and grew("engram_http_errors_total", code="invalid_input")
    assert grew("engram_recall_stage_seconds_count", stage="embed") and grew(
        "engram_recall_stage_seconds_count", stage="search"
    )
    assert grew("engram_recall_candidates_count", arm="dense") and grew("engram_recall_candidates_count", arm="lexical")
    assert not grew("engram_http_requests_total", route="/v1/recall", method="POST", status="500")  # control
    assert ("engram_embedding_backlog", frozenset()) in after
    deadline = time.monotonic() + 20  # the worker embeds the episode in the background
    while (
        _value(_samples(server), "engram_embedded_rows_total", kind="memory")
        <= _value(before, "engram_embedded_rows_total", kind="memory")
        and time.monotonic() < deadline
    ):
        time.sleep(0.1)
    final = _samples(server)
    assert _value(final, "engram_embedded_rows_total", kind="memory") > _value(
        before, "engram_embedded_rows_total", kind="memory"
    )
    assert _value(final, "engram_job_runs_total", job="embedding", outcome="ok") > 0


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[LiveServer]:
    settings = Settings(home=tmp_path / "home", embedder="hashing", rate_limit_per_second=0.05, rate_limit_burst=3)
    server = LiveServer(settings, SQLiteStore(settings.home), HashingEmbedder())
    server.start()
    yield server
    server.stop()


def test_a_key_over_its_rate_limit_gets_429_with_retry_after(limited: LiveServer) -> None:
    first, second = limited.key(), limited.key()
    with limited.client(first) as http:
        statuses = [http.get("/v1/facts").status_code for _ in range(3)]
        assert statuses == [200, 200, 200]  # the burst
        refused = http.get("/v1/facts")
        assert refused.status_code == 429, refused.text
        assert int(refused.headers["retry-after"]) >= 1
        body = refused.json()
        assert body["code"] == "rate_limited" and body["requestId"] == refused.headers["x-request-id"]
        assert http.post("/v1/recall", json={"query": "x"}).status_code == 429  # writes and reads alike
    with limited.client(second) as http:
        assert http.get("/v1/facts").status_code == 200  # control: the limit is per key


def test_a_request_id_is_in_its_json_log_line_and_its_error_body(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = SQLiteStore(home)
    token, _ = auth.create_key(store, tenant="t1", role="agent", grant=scope_fields(), create_tenant=True)
    store.close()
    port = _free_port()
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDER": "hashing", "ENGRAM_PORT": str(port)}
    server = subprocess.Popen(
        [sys.executable, "-m", "engramdb.cli", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_until_up(url)
        headers = {"Authorization": f"Bearer {token}"}
        bad = httpx.post(f"{url}/v1/episodes", json=episode_body(turnIndex=-1), headers=headers, timeout=30)
        good = httpx.post(f"{url}/v1/episodes", json=episode_body(), headers=headers, timeout=30)
        assert bad.status_code == 422 and good.status_code == 201
        rid = bad.json()["requestId"]
        assert rid == bad.headers["x-request-id"]
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0]
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    mine = [line for line in lines if line.get("requestId") == rid]
    assert mine and mine[0]["status"] == 422 and mine[0]["code"] == "invalid_input", output[-2000:]
    assert mine[0]["route"] == "/v1/episodes" and mine[0]["level"] == "INFO"
    good_id = good.headers["x-request-id"]  # control: the other request has its own line, its own id
    assert [line["status"] for line in lines if line.get("requestId") == good_id] == [201]


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("the server did not come up")
