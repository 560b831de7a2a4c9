"""Hostile searches cannot starve another scope's recall (issue 30, finding 1), on PostgreSQL.

The attack: eight searches whose plans took minutes filled the server's eight pooled connections,
and another agent's recall waited 30 s for one (503). Now the budget keeps every plan cheap, yet a
search it admits can still run for seconds on a large scope (tests/knowledge/hostile.py: the
costliest shape, 48 text probes per record, every record counted); the statement timeout ends
it, and where-queries hold at most two connections (one per scope). Eight clients send it
without pause from one scope while another scope's recall is timed, in rounds that alternate
with the hostile clients paused: the recall beside them stays within 3x its own latency alone,
measured in the same run.
"""

from __future__ import annotations

import statistics
import time
import uuid
from typing import Any

import pytest

from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.postgres.store import PostgresStore
from tests.conftest import LiveServer
from tests.factories import episode_body, participant, scope_fields
from tests.knowledge.hostile import SLOWEST, HostileClients, seed_records

RECORDS = 3_000
ROUNDS, RECALLS = 4, 12


def _recalls(http: Any, count: int) -> list[tuple[float, float]]:
    """When each of ``count`` recalls started and ended (each one answered, with memories)."""
    spans = []
    for i in range(count):
        start = time.monotonic()
        answer = http.post("/v1/recall", json={"query": f"what did we say about tea {i % 7}?"})
        spans.append((start, time.monotonic()))
        assert answer.status_code == 200, answer.text
        assert answer.json()["memories"], answer.text  # the positive control: it found its scope's memories
    return spans


def _median_ms(spans: list[tuple[float, float]]) -> float:
    return statistics.median(end - start for start, end in spans) * 1000


@pytest.mark.slow
@pytest.mark.postgres
def test_hostile_searches_do_not_starve_another_scopes_recall(pg_url: str, settings: Settings) -> None:
    store = PostgresStore(pg_url, schema=f"t_{uuid.uuid4().hex[:12]}")  # the defaults
    server = LiveServer(settings, store, HashingEmbedder())
    server.start()
    hostile: HostileClients | None = None
    try:
        attacker, other = server.key(), server.key(**scope_fields(participantScopeHash=participant("bob")))
        with server.client(attacker) as http:
            seed_records(http, RECORDS)
        with server.client(other) as http:
            episodes = [
                episode_body(f"Turn {i}: tea number {i % 7} and databases", f"noted {i}", turn=i) for i in range(60)
            ]
            assert http.post("/v1/episodes/batch", json={"episodes": episodes}).status_code == 200
        while store.tenant("t1").embedding_backlog():  # the worker done: it would slow the first rounds only
            time.sleep(0.05)
        hostile = HostileClients(server, attacker, SLOWEST)
        alone: list[tuple[float, float]] = []
        beside: list[tuple[float, float]] = []
        with server.client(other) as http:
            _recalls(http, 5)  # warm: the first recall of a scope loads what the next ones reuse
            for _ in range(ROUNDS):
                hostile.pause()
                alone += _recalls(http, RECALLS)
                hostile.start()
                beside += _recalls(http, RECALLS)
    finally:
        if hostile:  # before the server: a client left sending would retry a dead server without end
            hostile.stop()
        server.stop()
        store.close()
    counted = [body["total"] for _, _, status, body in hostile.answers if status == 200]
    assert counted and set(counted) == {RECORDS}  # the hostile search ran, over every record
    failed = [(status, body) for _, _, status, body in hostile.answers if status not in (200, 503)]
    assert not failed  # none failed otherwise (status 0: the connection broke)
    assert all(hostile.ran_during(*span) for span in beside)  # and one was running beside each timed recall
    ratio = _median_ms(beside) / _median_ms(alone)
    codes = sorted((status, body.get("code"), round(end - sent, 1)) for sent, end, status, body in hostile.answers)
    print(
        f"recall alone {_median_ms(alone):.1f} ms, beside 8 hostile searches {_median_ms(beside):.1f} ms "
        f"(medians of {len(beside)}): {ratio:.2f}x; hostile answers {codes}"
    )
    assert ratio < 3
