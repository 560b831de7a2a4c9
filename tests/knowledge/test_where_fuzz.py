"""The where-language, fuzzed over HTTP on both backends (issue 30): random nesting, every
operator, sizes at and past every limit of the budget (tests/knowledge/where_strategies.py).
Every answer is records (or aggregates) or a 422 problem naming a field; never a 5xx.

Bounded by time: ``ENGRAM_WHERE_FUZZ_SECONDS`` per backend (4 by default, so the suite spends
seconds here). The long run, reported in bench/RESULTS.md ("Issue 30"), past the suite's 300 s
per test::

    ENGRAM_WHERE_FUZZ_SECONDS=600 .venv/bin/pytest tests/knowledge/test_where_fuzz.py -s -n 0 \
        --timeout 0 -k "every and sqlite"     # and "every and postgres"
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings

from tests.conftest import LiveServer
from tests.knowledge.where_strategies import searches

SECONDS = float(os.environ.get("ENGRAM_WHERE_FUZZ_SECONDS", "4"))
TASKS = [
    {"title": "Write the invoice migration", "status": "open", "priority": 3, "due": "2026-03-10T12:00:00Z"},
    {"title": "Review tax rules", "status": "done", "priority": 1, "tags": ["db", "tax"], "done": True},
    {"title": "Rotate signing keys", "status": "open", "score": 2.5, "p0": "x" * 250, "p1": ["open", 3]},
]


def problem_of(answer: httpx.Response) -> str | None:
    """What is wrong with an answer, or None: 200 with records or aggregates, or a 422 problem
    whose message starts with the field it names."""
    if answer.status_code == 200:
        body = answer.json()
        return None if isinstance(body.get("records"), list) else f"200 without records: {answer.text[:300]}"
    if answer.status_code != 422:
        return f"{answer.status_code}: {answer.text[:300]}"
    body = answer.json()
    field = body.get("field")
    if body.get("code") != "invalid_input" or not isinstance(field, str) or not field:
        return f"422 names no field: {answer.text[:300]}"
    if field.startswith(("where", "orderBy", "aggregate")) and not body["message"].startswith(field):
        return f"422 message does not start with its field: {answer.text[:300]}"
    return None


def _seed(http: httpx.Client) -> None:
    project = {"name": "billing", "budget": 120000, "OWNER": {"name": "Carol"}, "TASK": TASKS}
    assert http.post("/v1/records", json={"label": "PROJECT", "data": project}).status_code == 201
    assert http.post("/v1/records", json={"label": "ENTITY", "data": {"name": "Alice"}}).status_code == 201


def fuzz(http: httpx.Client, seconds: float) -> tuple[Counter[str], list[str]]:
    """Send generated searches until ``seconds`` pass; return the answers seen and what went wrong."""
    seen: Counter[str] = Counter()
    found: list[str] = []

    @given(body=searches())
    @settings(
        max_examples=20, deadline=None, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck)
    )
    def send(body: dict[str, Any]) -> None:
        answer = http.post("/v1/records/search", json=body)
        problem = problem_of(answer)
        seen[f"{answer.status_code} {_where_in(answer)}"] += 1
        if problem is not None:
            found.append(f"{problem}\n  {json.dumps(body)[:1500]}")

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        send()
    return seen, found


def _where_in(answer: httpx.Response) -> str:
    """The first part of a refused field (``where``, ``orderBy``, ``limit``, ...), or ``ok``."""
    if answer.status_code != 422:
        return "ok"
    return str(answer.json().get("field", "")).split(".")[0].split("[")[0]


# A search of 1,000 values is a large example: Hypothesis warns when it would print one (only if
# something raised inside it, which its own report then shows).
@pytest.mark.filterwarnings("ignore:Generating overly large repr")
# Hypothesis blames a draw when the global random state moved while it ran; psycopg_pool's own thread
# moves it (the jitter of a new connection's lifetime) whenever the server's pool opens one.
@pytest.mark.filterwarnings("ignore:Do not use the `random` module inside strategies")
def test_every_search_answers_records_or_a_422_naming_a_field(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        _seed(http)
        seen, found = fuzz(http, SECONDS)
    print(f"{sum(seen.values())} searches: {dict(sorted(seen.items()))}")
    assert seen["200 ok"] and sum(n for key, n in seen.items() if key.startswith("422")), seen  # both kinds met
    assert not found, "\n".join(found[:10])


def test_the_check_sees_a_5xx_and_a_422_without_a_field() -> None:
    """Positive control for the check itself."""

    def answer(status: int, body: dict[str, Any]) -> httpx.Response:
        return httpx.Response(status, json=body)

    assert problem_of(answer(500, {"code": "internal", "message": "x"})) is not None
    assert problem_of(answer(503, {"code": "backend_unavailable", "message": "x"})) is not None
    assert problem_of(answer(422, {"code": "invalid_input", "message": "x"})) is not None
    assert problem_of(answer(422, {"code": "invalid_input", "message": "x", "field": "where.a"})) is not None
    assert problem_of(answer(422, {"code": "invalid_input", "message": "where.a: no", "field": "where.a"})) is None
    assert problem_of(answer(200, {"records": [], "total": 0})) is None
