"""Lifecycle hooks: start-up, pre-inference, completed turn, explicit write, compaction,
session switch, session end and shutdown, each against the real server."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from engramdb.config import Settings
from engramdb.sdk import Client
from engramdb.sdk.outbox import Outbox, OutboxStore
from engramdb.sdk.outbox.store import FILE_NAME
from tests.conftest import LiveServer
from tests.sdk.conftest import FAST, SessionFactory
from tests.sdk.helpers import BlackHole, FaultProxy, dead_url, make_episode, stored_episodes


def _queued(profile: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(profile / FILE_NAME) as db:
        return [json.loads(b) for (b,) in db.execute("SELECT body FROM pending ORDER BY seq")]


def test_start_up_replays_what_an_earlier_process_left(
    make_session: SessionFactory, profile: Path, scope: dict[str, Any], settings: Settings
) -> None:
    earlier = Outbox(profile, url=dead_url(), settings=FAST)
    earlier.append_episode(make_episode("Left behind by a crashed host.", scope))
    earlier.close(timeout=0)
    session = make_session()
    assert session.outbox is not None and session.outbox.flush(10)
    assert len(stored_episodes(settings.home)) == 1


def test_start_up_degrades_safely_when_the_outbox_cannot_be_set_up(
    make_session: SessionFactory, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the profile folder should be")
    session = make_session(profile_dir=blocker)
    assert session.outbox is None and session.degraded
    assert session.after_turn("The office moved to Porto.", "Noted.") is None
    assert session.last_skip and "outbox unavailable" in session.last_skip
    assert session.recall("where is the office?").error is None  # recall keeps working
    assert session.close() is False


def test_pre_inference_uses_the_prefetched_recall(
    make_session: SessionFactory, proxy: FaultProxy, agent_key: str
) -> None:
    session = make_session(proxy.url, api_key=agent_key)
    session.prefetch("what is our deploy day?")
    time.sleep(0.1)
    session.before_inference("what is our deploy day?")
    assert len(proxy.posts("/v1/recall")) == 1 and session.last_recall_error is None
    session.before_inference("a different question")
    assert len(proxy.posts("/v1/recall")) == 2


def test_completed_turn_queues_exactly_one_bounded_episode(make_session: SessionFactory, profile: Path) -> None:
    session = make_session(dead_url())  # nothing is delivered: the queue shows what was captured
    first = session.after_turn("Deploys happen on Tuesdays.", "Noted, Tuesdays.")
    assert session.after_turn("Deploys happen on Tuesdays.", "Noted, Tuesdays.") == first  # a retry
    assert session.after_turn("Is it Tuesday?", "Error: upstream", ok=False) is None  # a failed turn
    second = session.after_turn("x" * 50_000, "y" * 50_000)
    queued = _queued(profile)
    assert [q["eventId"] for q in queued] == [first, second]
    assert [q["turnIndex"] for q in queued] == [0, 1] and session.turn_index == 2
    assert max(len(q["userText"]) for q in queued) <= 4_000 and len(queued[1]["assistantText"]) <= 4_000
    # The id is stable across a process restart: the retried pair maps to the same event.
    session.close(timeout=0)
    again = make_session(dead_url())
    assert again.after_turn("x" * 50_000, "y" * 50_000) == second and again.turn_index == 2
    assert len(_queued(profile)) == 2


def test_explicit_write_produces_a_fact_and_unsupported_actions_nothing(
    make_session: SessionFactory, proxy: FaultProxy, server: LiveServer, agent_key: str
) -> None:
    session = make_session(proxy.url, api_key=agent_key)
    fact_id = session.remember("user", "editor", "The user edits with Helix.")
    assert session.memory_action("remove", subject="user", kind="editor", text="x") is None
    assert session.last_skip == "unsupported memory action 'remove'"
    assert session.memory_action("replace", subject="user", kind="editor", text="Vim") is None  # names no fact
    assert session.outbox is not None and session.outbox.flush(10)
    assert [p.body["factId"] for p in proxy.posts("/v1/facts")] == [fact_id]
    with Client(server.url, agent_key) as client:
        stored = client.get_fact(str(fact_id))
    assert stored.status == "active" and stored.origin == "stated" and stored.event["trustClass"] == "trusted"


def test_pre_compaction_queues_the_last_pair_not_the_transcript(make_session: SessionFactory, profile: Path) -> None:
    session = make_session(dead_url())
    transcript: list[dict[str, Any]] = [{"role": "system", "content": "You are helpful."}]
    for i in range(10):
        transcript += [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}]
    event_id = session.before_compaction(transcript)
    [queued] = _queued(profile)
    assert queued["eventId"] == event_id
    assert (queued["userText"], queued["assistantText"]) == ("question 9", "answer 9")
    assert session.before_compaction(transcript) == event_id and len(_queued(profile)) == 1


def test_session_switch_changes_the_id_and_counter_and_drops_stale_prefetch(
    make_session: SessionFactory, proxy: FaultProxy, agent_key: str, profile: Path
) -> None:
    proxy.fault_on = ("POST", "/v1/episodes")
    proxy.fail_next(*["503"] * 1_000)  # episodes stay queued, to be read back below
    session = make_session(proxy.url, api_key=agent_key)
    session.after_turn("first turn", "ok")
    session.after_turn("second turn", "ok")
    session.prefetch("what did we say?")
    session.switch_session("session-2")
    assert (session.session_id, session.turn_index) == ("session-2", 0)
    session.before_inference("what did we say?")
    assert len(proxy.posts("/v1/recall")) == 2  # the stale prefetch was not used
    session.after_turn("third turn", "ok")
    queued = _queued(profile)
    assert [(q["externalSessionId"], q["turnIndex"]) for q in queued] == [
        ("session-1", 0),
        ("session-1", 1),
        ("session-2", 0),
    ]
    session.switch_session("session-1")
    assert session.turn_index == 2


def test_session_end_flushes_within_its_budget_and_releases_caches(
    make_session: SessionFactory, black_hole: BlackHole, tmp_path: Path
) -> None:
    session = make_session()
    session.after_turn("The standup is at 9:30.", "Noted.")
    assert session.end_session() is True
    assert session.outbox is not None and session.outbox.pending() == []
    slow = replace(FAST, request_timeout=60.0)  # a stuck request would hold end_session for 60 s
    stuck = make_session(
        black_hole.url, api_key="egm.t1.x.y", profile_dir=tmp_path / "stuck", recall_timeout=0.3, outbox=slow
    )
    stuck.after_turn("The retro is on Fridays.", "Noted.")
    assert stuck.recall("when is the retro?").memories  # from the recent-write cache
    started = time.monotonic()
    assert stuck.end_session(timeout=0.3) is False
    assert time.monotonic() - started < 30  # the budget cut the stuck request short
    assert stuck.recall("when is the retro?").memories == ()  # the cache was released


def test_shutdown_stops_within_its_budget_and_keeps_pending_events(
    make_session: SessionFactory, black_hole: BlackHole, tmp_path: Path, settings: Settings
) -> None:
    profile = tmp_path / "host"
    # The black hole takes the request and never answers: without its budget, close would wait on the
    # HTTP client's own timeout (60 s here). That it returns long before is the check (not a timing claim).
    slow = replace(FAST, request_timeout=60.0)
    session = make_session(black_hole.url, api_key="egm.t1.x.y", profile_dir=profile, outbox=slow)
    event_id = session.after_turn("The on-call phone is in the drawer.", "Noted.")
    started = time.monotonic()
    assert session.close(timeout=0.3) is False
    assert time.monotonic() - started < 30
    assert [e.memory_id for e in OutboxStore(profile).pending()] == [event_id]
    restarted = make_session(profile_dir=profile)  # the real server this time
    assert restarted.outbox is not None and restarted.outbox.flush(10)
    assert stored_episodes(settings.home) == [event_id]
