"""The session's start and its later look-ups of the participant never raise into the host and
never hold it past their budget (docs/sdk.md): an answer that is not the server's (another
service at the address), a key refused once the server is back, a server that sends its answer a
line at a time. Each beside the same session on a server that answers rightly, as the control."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engramdb.errors import EngramError, ServerError
from engramdb.models.operations.integrations import RESOLVE_SCOPE
from engramdb.sdk import HostContext, operations
from engramdb.sdk.client import Client
from engramdb.sdk.session import MemorySession
from engramdb.sdk.start import LATE_CHECKS, RESOLVE_EVERY
from tests.conftest import LiveServer

from .conftest import FAST
from .helpers import FaultProxy, LateServer, wait_until

RESOLVE = ("POST", "/v1/scope/resolve")


def _host(participant: str = "ada") -> HostContext:
    return HostContext(agent_id="coder", profile_id="default", participant_id=participant)


def _session(url: str, key: str, profile: Path, **options: Any) -> MemorySession:
    options = {"start_timeout": 1.0, "recall_timeout": 0.3} | options
    return MemorySession(url, api_key=key, host=_host(), session_id="s-1", profile_dir=profile, outbox=FAST, **options)


def _within(seconds: float, work: Callable[[], Any]) -> tuple[bool, Any]:
    """Run ``work`` on a thread: whether it returned within ``seconds``, and what it returned.
    (A hang detector: the faults below would hold a blocked call for 30 s.)"""
    done: list[Any] = []
    thread = threading.Thread(target=lambda: done.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    return bool(done), done[0] if done else None


def test_a_success_answer_that_is_not_the_servers_is_an_engram_error(server: LiveServer, tmp_path: Path) -> None:
    key = server.key(role="host", agentId="coder", profileId="default")
    proxy = FaultProxy(server.url, fault_on=RESOLVE)
    try:
        call = operations.call_for(RESOLVE_SCOPE, operations.inputs_for(RESOLVE_SCOPE, (), {"userId": "ada"}, {}))
        with Client(proxy.url, key) as client:
            proxy.fail_next("html")
            with pytest.raises(ServerError, match=r"unreadable answer \(200, text/html\)") as raised:
                client.send(call)
            assert raised.value.retryable and isinstance(raised.value, EngramError)
            assert client.send(call).participant_scope_hash  # the control: the server's own answer reads

        proxy.fail_next("html")  # a hook's session at such an address starts, and says why it is idle
        idle = _session(proxy.url, key, tmp_path / "a")
        assert not idle.key_checked and "unreadable answer" in (idle.start_error or "")
        assert idle.after_turn("I keep my bike in the shed.", "Noted.") is not None  # queued on disk
        idle.close(timeout=0)
        ready = _session(proxy.url, key, tmp_path / "b")  # the control: no fault, the key checked
        assert ready.key_checked and ready.scope is not None
        ready.close()
    finally:
        proxy.close()


def test_a_key_refused_once_the_server_is_back_does_not_raise_from_recall(late: LateServer, tmp_path: Path) -> None:
    good = late.key(role="host", agentId="coder", profileId="default")
    unknown = good[:-6] + ("aaaaaa" if not good.endswith("aaaaaa") else "bbbbbb")  # its secret wrong
    refused = _session(late.url, unknown, tmp_path / "a")  # both start while the server is away
    control = _session(late.url, good, tmp_path / "b")
    assert refused.start_error and control.start_error
    late.start()
    # Recall asks the server again (at most every 5 s); the refusal is kept, not raised.
    refusal = "unauthenticated: unknown key"
    assert wait_until(lambda: bool(refused.recall("bike").error) and refused.start_error == refusal, 20, 0.5)
    assert refused.delivery.last_error == refusal and refused.scope is None and not refused.key_checked
    assert wait_until(lambda: control.recall("bike").error is None, timeout=20, step=0.5)  # the control
    assert control.key_checked and control.scope is not None
    refused.close(timeout=0)
    control.close(timeout=0)


def test_an_answer_sent_a_line_at_a_time_holds_neither_the_start_nor_recall(server: LiveServer, tmp_path: Path) -> None:
    key = server.key(role="host", agentId="coder", profileId="default")
    proxy = FaultProxy(server.url, fault_on=RESOLVE)
    try:
        proxy.fail_next("trickle")
        returned, session = _within(10, lambda: _session(proxy.url, key, tmp_path / "a", start_timeout=0.5))
        assert returned and (session.start_error or "").startswith("timeout")
        time.sleep(RESOLVE_EVERY)  # long enough that recall asks the server again
        proxy.fail_next("trickle")
        returned, outcome = _within(10, lambda: session.recall("bike"))
        assert returned and outcome.error  # within recall's budget, and without memory
        assert wait_until(lambda: session.recall("bike").error is None, timeout=20, step=0.5)  # the control
        session.close(timeout=0)
    finally:
        proxy.close()


def test_look_ups_left_waiting_on_such_a_server_are_bounded(server: LiveServer, tmp_path: Path) -> None:
    key = server.key(role="host", agentId="coder", profileId="default")
    proxy = FaultProxy(server.url, fault_on=RESOLVE)
    before = set(threading.enumerate())  # threads of earlier tests may still be ending
    try:
        proxy.fail_next(*["trickle"] * 10)
        session = _session(proxy.url, key, tmp_path / "a", start_timeout=0.3)
        for _ in range(6):  # each time recall may ask again (every RESOLVE_EVERY s; made due here)
            session._next_resolve = 0.0
            assert session.recall("bike").error
        waiting = [t for t in set(threading.enumerate()) - before if t.name == "engram-check"]
        assert len(waiting) == 1 + LATE_CHECKS  # the start's, and as many as the bound lets wait
        session.close(timeout=0)
    finally:
        proxy.close()
