"""A session's start: the key checked and the participant resolved by the server, and what the
session can tell about its deliveries afterwards.

A wrong or revoked key raises at start (``AuthenticationError``, ``AuthorizationError``) instead
of sending every later write to the dead letters. A server that cannot be reached does not stop
the session: writes are queued on disk as ever, and ``DeliveryState.start_error`` says so. A host
that names its users by their own ids (``HostContext.participant_id``) gets their
participantScopeHash from the server, which hashes with the tenant's secret salt; while the
server is away its writes queue with the raw id (sdk/writing.py) and the session asks again.
"""

from __future__ import annotations

import contextvars
import dataclasses
import logging
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from engramdb.errors import AuthenticationError, AuthorizationError, EngramError
from engramdb.models.operations.integrations import RESOLVE_SCOPE as RESOLVE
from engramdb.models.scopes import ScopeResolution
from engramdb.sdk import operations as op
from engramdb.sdk.client import Client
from engramdb.sdk.host import HostContext, judge
from engramdb.sdk.outbox import Outbox

log = logging.getLogger(__name__)
RESOLVE_EVERY = 5.0  # seconds between two attempts to resolve the participant while the server is away
LATE_CHECKS = 3  # look-ups left waiting on a server that never finishes its answer, at most, per session


@dataclass(frozen=True)
class DeliveryState:
    """Where a session's writes stand: queued, refused, and the last thing that went wrong."""

    pending: int  # queued on disk, not yet taken by the server
    dead_letters: int  # refused by the server (engram outbox dead / replay)
    last_error: str | None  # the last delivery failure, or why the start could not check the key
    last_delivered_at: float | None  # when the server last took a write (epoch seconds)
    key_checked: bool  # the server accepted the key (and resolved the participant) at start


def scope_request(host: HostContext) -> dict[str, Any]:
    """The scope fields the host names, a raw participant id as ``userId`` when no hash is given."""
    fields = {
        "agentId": host.agent_id,
        "profileId": host.profile_id,
        "privacyScope": host.privacy_scope,
        "participantScopeHash": host.participant_scope_hash,
        "sandboxEligible": host.sandbox_eligible,
    }
    if host.participant_scope_hash is None and host.participant_id is not None:
        fields["userId"] = host.participant_id
    return {k: v for k, v in fields.items() if v is not None and v != ""}


def check(client: Client, host: HostContext, timeout: float) -> tuple[HostContext, str | None]:
    """Ask the server who the key is and which participant the host names.

    Returns the host context (with participantScopeHash filled in from a ``participant_id``) and
    None, or the context as given and why the server could not answer. Raises
    AuthenticationError / AuthorizationError when the server refuses the key or the scope.
    """
    call = op.call_for(RESOLVE, op.inputs_for(RESOLVE, (), scope_request(host), {}))
    try:
        answer: ScopeResolution = client.send(call, timeout=timeout)
    except (AuthenticationError, AuthorizationError):
        raise
    except EngramError as error:
        log.warning("EngramDB did not answer at start (%s): writes are queued on disk until it does", error.code)
        return host, f"{error.code}: {error.message}"
    if host.participant_scope_hash is None and answer.participant_scope_hash is not None:
        host = dataclasses.replace(host, participant_scope_hash=answer.participant_scope_hash)
    return host, None


def begin_check(client: Client, host: HostContext, timeout: float) -> Future[tuple[HostContext, str | None]]:
    """``check`` on a thread of its own (a daemon: one left running must not hold the host's process
    open at its exit); its answer, or what it raised, in the future returned."""
    done: Future[tuple[HostContext, str | None]] = Future()

    def run() -> None:
        try:
            done.set_result(check(client, host, timeout))
        except BaseException as error:  # handed to the caller, which raises it
            done.set_exception(error)

    threading.Thread(target=contextvars.copy_context().run, args=(run,), name="engram-check", daemon=True).start()
    return done


def check_within(
    client: Client, host: HostContext, timeout: float, done: Future[tuple[HostContext, str | None]] | None = None
) -> tuple[HostContext, str | None]:
    """``check`` (begun already as ``done``, or now), waited for ``timeout`` seconds in all. httpx's
    timeout bounds each wait for data, not the whole answer: a server that sent its answer a line at
    a time held the caller (a hook, a turn) without end. A check still running then goes on on its
    own thread; its answer is dropped, and the session asks again later (``RESOLVE_EVERY``)."""
    done = done or begin_check(client, host, timeout)
    try:
        return done.result(timeout=timeout)
    except TimeoutError:
        log.warning("EngramDB did not answer at start within %.1f s: writes are queued on disk until it does", timeout)
        return host, f"timeout: no answer within {timeout * 1000:.0f} ms"


def eligible(host: HostContext, session_id: str) -> bool:
    """True when the session may recall or write once its participant is known."""
    unresolved = host.participant_scope_hash is None and bool(host.participant_id)
    verdict = judge(dataclasses.replace(host, participant_scope_hash="0" * 64) if unresolved else host, session_id)
    return verdict.can_read or verdict.can_write


class Startup:
    """What ``MemorySession`` does at start and reports after: the part of it this module owns."""

    host: HostContext
    client: Client
    outbox: Outbox | None
    degraded: str | None
    session_id: str
    _owns_client: bool

    def _enter(self, session_id: str) -> None:  # pragma: no cover - the session's
        raise NotImplementedError

    def _start(self, check_key: bool, timeout: float, session_id: str) -> None:
        self.key_checked = False
        self.start_error: str | None = None
        self._start_timeout = timeout
        self._next_resolve = 0.0
        self._late_checks: list[Future[tuple[HostContext, str | None]]] = []
        # A context memory may not be used in sends nothing, not even the check.
        if check_key and eligible(self.host, session_id):
            self._check_start()

    def _check_start(self) -> None:
        """Check the key (401/403 raise here) and resolve a raw participant id (sdk/start.py)."""
        try:
            self.host, self.start_error = check_within(self.client, self.host, self._start_timeout)
        except EngramError:
            if self._owns_client:
                self.client.close()
            raise
        self.key_checked = self.start_error is None
        if self.start_error:  # the next write does not wait for the same answer again
            self._next_resolve = time.monotonic() + RESOLVE_EVERY

    def _resolve_late(self, budget: float) -> None:
        # The server was away at start and only the raw participant id is known: ask again (at
        # most every 5 s, within ``budget`` s: recall's), so that the session's scope appears once
        # the server answers. Until then writes queue with the raw id without waiting for the
        # server (sdk/writing.py) and nothing is recalled.
        if self.host.participant_scope_hash is not None or self.host.participant_id is None:
            return
        if time.monotonic() < self._next_resolve:
            return
        self._next_resolve = time.monotonic() + RESOLVE_EVERY
        self._late_checks = [c for c in self._late_checks if not c.done()]
        if len(self._late_checks) >= LATE_CHECKS:
            return  # as many look-ups still wait on the server: no thread more every 5 s, without end
        budget = min(self._start_timeout, budget)
        self._late_checks.append(begin_check(self.client, self.host, budget))
        try:
            self.host, self.start_error = check_within(self.client, self.host, budget, self._late_checks[-1])
        except EngramError as error:  # a key refused now: recall and hooks never raise (docs/sdk.md)
            log.warning("EngramDB refused the session's key: %s", error.message)
            self.start_error = f"{error.code}: {error.message}"
            return
        if self.host.participant_scope_hash is not None:
            self.key_checked = True
            self._enter(self.session_id)

    @property
    def delivery(self) -> DeliveryState:
        """Pending writes, dead letters and the last error: what a silent failure would hide."""
        store = self.outbox.store if self.outbox else None
        pending = store.count() if store and not store.closed else 0
        dead = len(store.dead_letters()) if store and not store.closed else 0
        error = (self.outbox.last_error if self.outbox else None) or self.start_error or self.degraded
        return DeliveryState(
            pending, dead, error, self.outbox.last_delivered_at if self.outbox else None, self.key_checked
        )
