"""Delivery: the outbox against the real server, with faults injected by a loopback proxy."""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engramdb.config import Settings
from engramdb.sdk import Client
from engramdb.sdk.errors import OutboxFullError
from engramdb.sdk.outbox import Outbox, OutboxSettings, OutboxStore
from engramdb.sdk.outbox.__main__ import main as outbox_cli
from engramdb.sdk.outbox.store import FILE_NAME
from tests.conftest import LiveServer
from tests.contract._helpers import validator
from tests.sdk.conftest import FAST
from tests.sdk.helpers import BlackHole, FaultProxy, dead_url, make_episode, stored_episodes, wait_until


def _rows(profile: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(profile / FILE_NAME) as db:
        return db.execute("SELECT kind, memory_id, body FROM pending ORDER BY seq").fetchall()


def test_append_is_durable_before_anything_is_scheduled(profile: Path, scope: dict[str, Any]) -> None:
    outbox = Outbox(profile, url=dead_url(), start=False)
    event = make_episode("Use TypeScript for the billing service.", scope)
    assert outbox.append_episode(event) is True
    # Read back through a separate connection, as a restarted process would: the canonical event.
    [(kind, memory_id, body)] = _rows(profile)
    assert (kind, memory_id) == ("episode", event.event_id)
    assert json.loads(body) == event.wire() and validator().is_valid(json.loads(body))
    assert outbox.append_episode(event) is False  # the same event is queued once
    assert len(_rows(profile)) == 1
    outbox.close(timeout=0)
    assert len(_rows(profile)) == 1


def test_transient_failures_are_retried_without_loss_or_duplicate(
    proxy: FaultProxy, agent_key: str, profile: Path, scope: dict[str, Any], settings: Settings
) -> None:
    # forward_then_drop: the server stores the event but the answer is lost, so it is sent again.
    faults = ("503", "drop", "forward_then_drop", "429", "500", "forward_then_drop")
    proxy.fail_next(*faults)
    events = [make_episode(f"Fact number {i} about the deploy pipeline.", scope, turn=i) for i in range(5)]
    with Outbox(profile, url=proxy.url, api_key=agent_key, settings=FAST) as outbox:
        for event in events:
            outbox.append_episode(event)
        assert outbox.flush(15)
        assert outbox.pending() == [] and outbox.dead_letters() == []
    stored = stored_episodes(settings.home)
    assert Counter(stored) == Counter(e.event_id for e in events)  # each exactly once
    assert len(proxy.posts("/v1/episodes")) == len(events) + len(faults)


def test_entry_is_removed_only_after_the_server_acknowledged(
    proxy: FaultProxy, agent_key: str, profile: Path, scope: dict[str, Any], settings: Settings
) -> None:
    proxy.fail_next(*["503"] * 100)
    event = make_episode("The on-call rotation changes on Mondays.", scope)
    with Outbox(profile, url=proxy.url, api_key=agent_key, settings=FAST) as outbox:
        outbox.append_episode(event)
        assert wait_until(lambda: len(proxy.posts("/v1/episodes")) >= 3)
        [entry] = OutboxStore(profile).pending()  # still on disk while the server says 503
        assert entry.memory_id == event.event_id and entry.attempts >= 2
        assert entry.last_error and "backend_unavailable" in entry.last_error
        proxy.clear_faults()
        assert outbox.flush(10)
    assert stored_episodes(settings.home) == [event.event_id]
    # 200 "already stored" is an acknowledgement too: the entry goes, no second row appears.
    with Client(proxy.url, agent_key) as client:
        assert client.write_episode(event.wire()).created is False
    with Outbox(profile, url=proxy.url, api_key=agent_key, settings=FAST) as outbox:
        outbox.append_episode(event)
        assert outbox.flush(10)
    assert stored_episodes(settings.home) == [event.event_id]


def test_restart_replays_pending_entries(
    server: LiveServer, agent_key: str, profile: Path, scope: dict[str, Any], settings: Settings
) -> None:
    events = [make_episode(f"Replay me, number {i}.", scope, turn=i) for i in range(3)]
    down = Outbox(profile, url=dead_url(), settings=FAST)
    for event in events:
        down.append_episode(event)
    assert down.close(timeout=0.2) is False  # could not deliver: all three stay on disk
    assert len(_rows(profile)) == 3
    with Outbox(profile, url=server.url, api_key=agent_key, settings=FAST) as up:
        assert up.flush(10)
    assert sorted(stored_episodes(settings.home)) == sorted(e.event_id for e in events)
    assert _rows(profile) == []


def test_shutdown_timeout_keeps_the_entry_on_disk(
    black_hole: BlackHole,
    server: LiveServer,
    agent_key: str,
    profile: Path,
    scope: dict[str, Any],
    settings: Settings,
) -> None:
    event = make_episode("Keep me through a shutdown.", scope)
    outbox = Outbox(profile, url=black_hole.url, settings=replace(FAST, request_timeout=30))
    outbox.append_episode(event)
    started = time.monotonic()
    assert outbox.close(timeout=0.3) is False
    # The stuck request would hold close for its 30 s timeout: returning long before is the budget holding.
    assert time.monotonic() - started < 10
    assert [e.memory_id for e in OutboxStore(profile).pending()] == [event.event_id]
    with Outbox(profile, url=server.url, api_key=agent_key, settings=FAST) as again:
        assert again.flush(10)
    assert stored_episodes(settings.home) == [event.event_id]


def _insert_raw(profile: Path, kind: str, memory_id: str, body: str) -> None:
    with sqlite3.connect(profile / FILE_NAME) as db:
        db.execute(
            "INSERT INTO pending (kind, memory_id, body, created_at) VALUES (?, ?, ?, 0)", (kind, memory_id, body)
        )


def test_malformed_entries_are_isolated_and_dead_letters_replay(
    server: LiveServer,
    agent_key: str,
    profile: Path,
    scope: dict[str, Any],
    settings: Settings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    OutboxStore(profile).close()
    # Broken entries first, so that they would block the queue if they were not isolated.
    _insert_raw(profile, "episode", "a" * 64, "{not json")
    _insert_raw(profile, "mystery", "b" * 64, json.dumps(make_episode("x", scope).wire()))
    tampered = {**make_episode("Original text.", scope).wire(), "userText": "Tampered text."}
    _insert_raw(profile, "episode", tampered["eventId"], json.dumps(tampered))  # the server says 422
    good = [make_episode(f"Good entry {i}.", scope, turn=i) for i in range(3)]
    with Outbox(profile, url=server.url, api_key=agent_key, settings=FAST) as outbox:
        for event in good:
            outbox.append_episode(event)
        assert outbox.flush(10)
        dead = outbox.dead_letters()
    assert sorted(stored_episodes(settings.home)) == sorted(e.event_id for e in good)
    assert [(d.error_code, d.http_status) for d in dead] == [
        ("malformed_entry", 0),
        ("malformed_entry", 0),
        ("invalid_input", 422),
    ]
    assert "eventId" in dead[2].error_message

    assert outbox_cli(["list", "--profile", str(profile), "--dead", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [d["seq"] for d in listed] == [d.seq for d in dead]
    assert outbox_cli(["replay", "--profile", str(profile), str(dead[2].seq)]) == 0
    assert "1 dead letters queued again" in capsys.readouterr().out
    assert [e.memory_id for e in OutboxStore(profile).pending()] == [tampered["eventId"]]
    # Delivered again from the command line, it is refused again and goes back to the dead letters.
    env = {**os.environ, "ENGRAM_API_KEY": agent_key}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "engramdb.sdk.outbox",
            "deliver",
            "--profile",
            str(profile),
            "--url",
            server.url,
            "--timeout",
            "5",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "pending: 0, dead letters: 3" in done.stdout


def test_queue_is_bounded(profile: Path, scope: dict[str, Any]) -> None:
    outbox = Outbox(profile, url=dead_url(), settings=OutboxSettings(max_pending=3), start=False)
    events = [make_episode(f"Entry {i}.", scope, turn=i) for i in range(4)]
    for event in events[:3]:
        outbox.append_episode(event)
    with pytest.raises(OutboxFullError) as full:
        outbox.append_episode(events[3])
    assert full.value.context["limit"] == 3 and full.value.retryable
    assert outbox.append_episode(events[0]) is False  # an event already queued is no new entry
    assert [e.memory_id for e in outbox.pending()] == [e.event_id for e in events[:3]]
    outbox.close(timeout=0)


def test_concurrency_is_bounded(proxy: FaultProxy, agent_key: str, profile: Path, scope: dict[str, Any]) -> None:
    proxy.delay = 0.1
    with Outbox(profile, url=proxy.url, api_key=agent_key, settings=replace(FAST, concurrency=2)) as outbox:
        for i in range(8):
            outbox.append_episode(make_episode(f"Parallel {i}.", scope, turn=i))
        assert outbox.flush(10)
    assert proxy.max_inflight == 2


_NEXT = re.compile(r"next attempt in ([0-9.]+) s")


def test_backoff_follows_the_reference_numbers(
    proxy: FaultProxy, agent_key: str, profile: Path, scope: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """0.25 * 2**n s with jitter (x0.5-1), four attempts, then a rest and a new round.

    The delays are read where the outbox schedules them (its DEBUG line); the gaps the proxy saw are
    only held to be no shorter (a loaded machine makes them longer, never shorter)."""
    proxy.fail_next(*["503"] * 5)
    settings = OutboxSettings(concurrency=1, rest_seconds=0.3)
    with caplog.at_level(logging.DEBUG, logger="engramdb.sdk.outbox.delivery"):
        with Outbox(profile, url=proxy.url, api_key=agent_key, settings=settings, seed=7) as outbox:
            outbox.append_episode(make_episode("Back off politely.", scope))
            assert outbox.flush(30)
    scheduled = [float(m.group(1)) for r in caplog.records if (m := _NEXT.search(r.getMessage()))]
    assert len(scheduled) == 5
    bands = [(0.125, 0.25), (0.25, 0.5), (0.5, 1.0), (0.3, 0.3), (0.125, 0.25)]
    for delay, (low, high) in zip(scheduled, bands, strict=True):
        assert low - 0.006 <= delay <= high + 0.006, scheduled  # the log rounds to two decimals
    times = [s.at for s in proxy.posts("/v1/episodes")]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) == 5 and all(gap >= delay - 0.02 for gap, delay in zip(gaps, scheduled, strict=True)), gaps
