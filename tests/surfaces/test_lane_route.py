"""REST's recall is served by a plain route (api/routes.py: ``LaneRoute``), not FastAPI's: the same
requests, good and bad, get the same answers from it as from the FastAPI route that served recall
before, in a second server whose recall is routed that way. FastAPI's route is the oracle: status,
problem code, field and message, the hits, the headers and the route the metrics count."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import APIRouter

from engramdb import metrics
from engramdb.api import routes
from engramdb.api.routes import LaneRoute
from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.models.operations import BY_NAME
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields

RECALL = BY_NAME["recall"]
LIMIT = 4_096  # bytes of a body: small, so the too-large cases stay small


def _server(home: Path, *, fastapi_route: bool) -> LiveServer:
    settings = Settings(home=home, embedder="hashing", embed_poll_seconds=0.05, max_body_bytes=LIMIT)
    live = LiveServer(settings, SQLiteStore(home), HashingEmbedder())
    served = [i for i, r in enumerate(live.app.router.routes) if isinstance(r, LaneRoute)]
    assert len(served) == 1  # the control: the production app serves recall by the plain route
    if fastapi_route:  # as recall was served before: FastAPI's route reading the bytes (api/body.py)
        router = APIRouter()
        routes._add_unlisted(router, RECALL, RECALL.path, "recall_served")
        live.app.router.routes[served[0]] = router.routes[0]
    return live


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[dict[str, tuple[LiveServer, str]]]:
    made = {}
    for name in ("plain", "fastapi"):
        live = _server(tmp_path / name, fastapi_route=name == "fastapi")
        live.start()
        token = live.key()
        with live.client(token) as http:
            for i, text in enumerate(["I prefer TypeScript.", "We deploy on Fridays.", "TypeScript it is."]):
                written = http.post("/v1/episodes", json=episode_body(text, "ok", turn=i, scope=scope_fields()))
                assert written.status_code == 201, written.text
        _until_embedded(live)  # else a recall's hits depend on how far the worker got (a review's finding)
        made[name] = (live, token)
    yield made
    for live, _ in made.values():
        live.stop()


def _until_embedded(live: LiveServer) -> None:
    deadline = time.monotonic() + 20
    while live.store.tenant("t1").embedding_backlog():
        assert time.monotonic() < deadline, "the worker never embedded the episodes"
        time.sleep(0.02)


def _chunks(size: int) -> Iterator[bytes]:
    body = json.dumps({"query": "x" * size, "scope": scope_fields()}).encode()
    for start in range(0, len(body), 1_000):
        yield body[start : start + 1_000]


GOOD = {"query": "which language?", "scope": scope_fields(), "limit": 3}
# name -> (method, headers beyond the key, body or None, key: "good", "bad" or "none")
CASES: dict[str, tuple[str, dict[str, str], Any, str]] = {
    "good": ("POST", {}, GOOD, "good"),
    "explain": ("POST", {}, {**GOOD, "explain": True, "sessions": 2}, "good"),
    "no key, a body": ("POST", {}, GOOD, "none"),
    "no key, no body": ("POST", {}, None, "none"),
    "unknown key": ("POST", {}, GOOD, "bad"),
    "no body": ("POST", {}, None, "good"),
    "not JSON": ("POST", {"content-type": "application/json"}, b"{not json", "good"),
    "text, not JSON": ("POST", {"content-type": "text/plain"}, b'{"query": "x"}', "good"),
    "no content type": ("POST", {}, b'{"query": "x"}', "good"),
    "a list": ("POST", {}, [GOOD], "good"),
    "no query": ("POST", {}, {"scope": scope_fields()}, "good"),
    "limit 0": ("POST", {}, {**GOOD, "limit": 0}, "good"),
    "limit text": ("POST", {}, {**GOOD, "limit": "many"}, "good"),
    "unknown field": ("POST", {}, {**GOOD, "querry": "x"}, "good"),
    "a scope outside the key's": ("POST", {}, {**GOOD, "scope": scope_fields(agentId="other")}, "good"),
    "not UTF-8": ("POST", {"content-type": "application/json"}, b'{"query": "\xff\xfe"}', "good"),
    "UTF-16": ("POST", {"content-type": "application/json"}, json.dumps(GOOD).encode("utf-16"), "good"),
    "nested deep": ("POST", {"content-type": "application/json"}, b"[" * 2_000 + b"]" * 2_000, "good"),
    "a long integer": ("POST", {"content-type": "application/json"}, b'{"limit": 1' + b"0" * 5_000 + b"}", "good"),
    "expect 100-continue": ("POST", {"expect": "100-continue"}, GOOD, "good"),
    "declared too large": ("POST", {}, {**GOOD, "query": "x" * LIMIT}, "good"),
    "streamed": ("POST", {"content-type": "application/json"}, "chunks small", "good"),
    "streamed too large": ("POST", {"content-type": "application/json"}, "chunks", "good"),
    "GET": ("GET", {}, None, "good"),
    "OPTIONS": ("OPTIONS", {}, None, "good"),
}


def _ask(live: LiveServer, token: str, case: tuple[str, dict[str, str], Any, str]) -> httpx.Response:
    method, headers, body, key = case
    sent = {**headers}
    if key != "none":
        sent["Authorization"] = f"Bearer {token if key == 'good' else token[:-4] + 'abcd'}"
    with httpx.Client(base_url=live.url, timeout=30) as http:
        if body in ("chunks", "chunks small"):
            size = LIMIT if body == "chunks" else 10
            return http.request(method, RECALL.path, headers=sent, content=_chunks(size))
        if isinstance(body, bytes) or body is None:
            return http.request(method, RECALL.path, headers=sent, content=body)
        return http.request(method, RECALL.path, headers=sent, json=body)


_DIFFERING_HEADERS = frozenset({"date", "x-request-id", "content-length"})  # a request id's length may differ


def _seen(answer: httpx.Response) -> dict[str, Any]:
    """What a client sees, without what differs between two servers (ids, times, request ids)."""
    headers = {k: v for k, v in answer.headers.items() if k not in _DIFFERING_HEADERS}
    seen: dict[str, Any] = {"status": answer.status_code, "headers": sorted(headers.items())}
    if not answer.content:
        return seen
    body = answer.json()
    if answer.status_code == 200:
        seen["memories"] = [(m["text"], m["source"], sorted(m)) for m in body["memories"]]
        seen["keys"] = sorted(body)
        seen["sessions"] = None if body.get("sessions") is None else len(body["sessions"])
        seen["context"] = body["context"].count("\n")
    else:
        seen.update({k: body.get(k) for k in ("code", "field", "message", "errors")})
    return seen


@pytest.mark.parametrize("case", list(CASES))
def test_the_plain_route_answers_as_fastapis_did(servers: dict[str, tuple[LiveServer, str]], case: str) -> None:
    plain, fastapi = (_seen(_ask(*servers[name], CASES[case])) for name in ("plain", "fastapi"))
    assert plain == fastapi
    if case in ("good", "explain", "UTF-16", "expect 100-continue", "streamed"):
        assert plain["status"] == 200 and plain["memories"]  # the control: the hits compared are there
    else:
        assert plain["status"] != 200


def test_the_plain_route_is_counted_by_its_template(servers: dict[str, tuple[LiveServer, str]]) -> None:
    """The metrics and the access log name the route by its template (``Observe``), not "unmatched"."""
    live, token = servers["plain"]

    def counted(route: str, status: str) -> float:
        return float(metrics.REQUESTS.labels(route, "POST", status)._value.get())

    before = {s: (counted(RECALL.path, s), counted("unmatched", s)) for s in ("200", "422")}
    assert _ask(live, token, CASES["good"]).status_code == 200
    assert _ask(live, token, CASES["no query"]).status_code == 422
    for status, (ours, unmatched) in before.items():
        assert counted(RECALL.path, status) == ours + 1, status
        assert counted("unmatched", status) == unmatched, status
