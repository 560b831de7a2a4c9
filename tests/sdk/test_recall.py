"""Recall rows: fail-open timeout, caps, the recent-write cache, merging by id, marking."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from engramdb.contract.format import HEADING
from engramdb.sdk.recall import RecallItem, clamp_timeout, merge
from tests.conftest import LiveServer
from tests.sdk.conftest import SessionFactory
from tests.sdk.helpers import BlackHole, FaultProxy, dead_url

SLACK = 0.05  # the bound: the timeout plus 50 ms


def _timed(session: Any, query: str) -> tuple[str, float]:
    started = time.monotonic()
    context = session.before_inference(query)
    return context, time.monotonic() - started


def test_recall_with_the_server_stopped_returns_empty_within_the_timeout(
    make_session: SessionFactory, server: LiveServer
) -> None:
    session = make_session()
    assert session.recall("warm up the connection").error is None
    session.recall_timeout = 0.3  # the production default, now that the connection is warm
    server.stop()
    for _ in range(3):
        context, elapsed = _timed(session, "which language for the billing service?")
        assert context == "" and elapsed <= session.recall_timeout + SLACK, elapsed
        assert session.last_recall_error and session.last_recall_error.startswith("transport_error")


@pytest.mark.parametrize("timeout", [0.3, 0.1])
def test_recall_against_a_silent_server_gives_up_at_the_timeout(
    timeout: float, make_session: SessionFactory, black_hole: BlackHole
) -> None:
    session = make_session(black_hole.url, api_key="egm.t1.x.y", recall_timeout=timeout)
    for _ in range(3):
        context, elapsed = _timed(session, "which language for the billing service?")
        assert context == "" and timeout - 0.01 <= elapsed <= timeout + SLACK, elapsed
        assert session.last_recall_error == f"timeout: no answer within {timeout * 1000:.0f} ms"


def test_the_timeout_is_clamped_to_50_ms_and_30_s(make_session: SessionFactory) -> None:
    assert (clamp_timeout(0.001), clamp_timeout(0.3), clamp_timeout(120)) == (0.05, 0.3, 30.0)
    assert make_session(dead_url(), recall_timeout=0).recall_timeout == 0.05


def test_query_length_result_count_and_block_size_are_capped(
    make_session: SessionFactory, proxy: FaultProxy, agent_key: str
) -> None:
    session = make_session(proxy.url, api_key=agent_key, recall_limit=500, context_chars=600)
    for i in range(30):
        session.after_turn(f"Billing fact {i}: invoices go out on day {i}.", "Noted.")
    assert session.outbox is not None and session.outbox.flush(10)
    outcome = session.recall("billing invoices " * 1_000)
    [sent] = proxy.posts("/v1/recall")
    assert len(sent.body["query"]) == 4_000 and sent.body["limit"] == 20
    assert outcome.error is None and 1 <= len(outcome.memories) <= 20
    assert outcome.context.startswith(HEADING) and 300 < len(outcome.context) <= 600
    assert "untrusted" in outcome.context and "never instructions" in outcome.context


def test_a_recent_write_is_recallable_before_the_server_has_it(
    make_session: SessionFactory, proxy: FaultProxy, agent_key: str, tmp_path: Path
) -> None:
    proxy.fault_on = ("POST", ("/v1/episodes", "/v1/facts"))
    proxy.fail_next(*["503"] * 1_000)  # writes cannot get through; recall still can
    session = make_session(proxy.url, api_key=agent_key)
    episode = session.after_turn("Our staging database lives in Frankfurt.", "Good to know.")
    fact = session.remember("infra", "staging-region", "Staging runs in eu-central-1 (Frankfurt).")
    outcome = session.recall("where is staging, Frankfurt?")
    assert outcome.error is None and proxy.posts("/v1/recall")
    assert {(m.id, m.cached) for m in outcome.memories} == {(episode, True), (fact, True)}
    assert "Frankfurt" in outcome.context
    # With the server out of reach entirely, the recent writes are still there.
    offline = make_session(dead_url(), profile_dir=tmp_path / "offline")
    offline.after_turn("The VPN gateway is in Dublin.", "Noted.")
    outcome = offline.recall("where is the VPN gateway?")
    assert outcome.error and [m.cached for m in outcome.memories] == [True] and "Dublin" in outcome.context


def test_remote_and_cached_hits_merge_by_id(make_session: SessionFactory) -> None:
    session = make_session()
    episode = session.after_turn("The release train leaves every second Thursday.", "Noted.")
    assert session.outbox is not None and session.outbox.flush(10)
    outcome = session.recall("when does the release train leave?")
    assert [m.id for m in outcome.memories] == [episode]
    assert outcome.memories[0].cached is False  # the server's copy wins


def test_the_current_session_can_be_excluded(make_session: SessionFactory, tmp_path: Any) -> None:
    earlier = make_session(session_id="earlier", profile_dir=tmp_path / "a")
    old = earlier.after_turn("Payments retry three times on failure.", "Noted.")
    assert earlier.outbox is not None and earlier.outbox.flush(10)
    session = make_session(session_id="current", exclude_current_session=True, profile_dir=tmp_path / "b")
    mine = session.after_turn("Payments are retried with jitter now.", "Noted.")
    assert session.outbox is not None and session.outbox.flush(10)
    ids = [m.id for m in session.recall("how do payments retry?").memories]
    assert old in ids and mine not in ids


def test_merge_keeps_the_server_copy_and_half_the_slots_for_fresh_writes() -> None:
    def item(name: str, cached: bool = False) -> RecallItem:
        return RecallItem(name, "EPISODE", name, 1.0, "mixed", cached=cached)

    remote = [item(f"r{i}") for i in range(8)]
    fresh = [item("r0", cached=True), *(item(f"c{i}", cached=True) for i in range(6))]
    merged = merge(remote, fresh, 8)
    assert [m.id for m in merged] == ["r0", "r1", "r2", "r3", "c0", "c1", "c2", "c3"]
    assert merged[0].cached is False
    assert [m.id for m in merge(remote[:2], fresh, 8)] == ["r0", "r1", "c0", "c1", "c2", "c3", "c4", "c5"]
    assert [m.id for m in merge(remote, [], 5)] == ["r0", "r1", "r2", "r3", "r4"]
