"""``MemorySession``: an agent host's lifecycle as methods, safe when the server is slow or away.

    start-up          the outbox opens and replays what an earlier process left
    prefetch          optional: start recall early (an earlier hook than inference)
    before_inference  recall within the timeout (default 300 ms) -> the context block, or ""
    after_turn        exactly one bounded, redacted episode per completed primary turn
    remember          a fact through the host's trusted path (``memory_action`` for tools)
    before_compaction the last eligible pair of the transcript, not the transcript
    switch_session    new session id and turn counter; stale prefetched recall dropped
    end_session       bounded flush; caches released
    close             bounded flush; undelivered events stay on disk for the next start

Hooks never raise for memory-side trouble: a refused context, a capture with nothing left
after redaction or a full outbox writes nothing and says why in ``last_skip``; a failed or
late recall returns the recent-write hits only and says why in ``last_recall_error``.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from engramdb.contract.bounds import QUERY_CAP
from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.contract.events import Episode, Scope
from engramdb.contract.format import BLOCK_CAP
from engramdb.errors import InvalidInputError
from engramdb.models.policy import DEFAULT_MULTI_VALUED
from engramdb.sdk import start
from engramdb.sdk.bodies import episode_body, fact_body
from engramdb.sdk.capture import (
    FACT_CHARS,
    Refused,
    clean_pair,
    clean_text,
    latest_pair,
    normalize,
    shown_text,
)
from engramdb.sdk.client import Client
from engramdb.sdk.errors import OutboxFullError
from engramdb.sdk.flight import Flight, answer, launch, recall_request
from engramdb.sdk.host import HostContext, Verdict, judge
from engramdb.sdk.outbox import Outbox, OutboxSettings, SessionState
from engramdb.sdk.recall import (
    DEFAULT_TIMEOUT,
    MAX_LIMIT,
    CachedMemory,
    RecallOutcome,
    RecentWrites,
    clamp_timeout,
    merge,
    render,
)
from engramdb.sdk.writing import Prepared, Target, prepare_episode, prepare_fact, queue_episode, queue_fact

log = logging.getLogger(__name__)
Message = Mapping[str, object]


class MemorySession(start.Startup):
    """One agent conversation's memory: recall before inference, durable writes after turns."""

    def __init__(
        self,
        url: str | None = None,
        *,
        api_key: str | None = None,
        host: HostContext,
        session_id: str,
        profile_dir: str | Path,
        client: Client | None = None,
        recall_timeout: float = DEFAULT_TIMEOUT,
        recall_limit: int = 8,
        context_chars: int = BLOCK_CAP,
        exclude_current_session: bool = False,
        flush_timeout: float = 2.0,
        cache_size: int = 128,
        outbox: OutboxSettings | None = None,
        multi_valued_kinds: Collection[str] = tuple(DEFAULT_MULTI_VALUED),
        check_key: bool = True,
        start_timeout: float = 2.0,
        extract: bool = False,
    ) -> None:
        if client is None and url is None:
            raise ValueError("a MemorySession needs a url or a client")
        settings = outbox or OutboxSettings(shutdown_timeout=flush_timeout)
        self.host = host
        self.client = client or Client(str(url), api_key, timeout=settings.request_timeout)
        self._owns_client = client is None
        self._start(check_key, start_timeout, session_id)
        self.recall_timeout = clamp_timeout(recall_timeout)
        self.recall_limit = min(MAX_LIMIT, max(1, recall_limit))
        self.context_chars = min(BLOCK_CAP, max(0, context_chars))
        self.exclude_current_session = exclude_current_session
        self.extract = extract  # each delivered turn also queues a server-side extraction of facts
        self.flush_timeout = flush_timeout
        self.last_recall: RecallOutcome | None = None
        self.last_skip: str | None = None
        self.degraded: str | None = None
        self._cache = RecentWrites(cache_size, multi_valued_kinds=multi_valued_kinds)
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="engram-recall")
        self._lock = threading.RLock()
        self._closed = False
        self.outbox: Outbox | None = None
        try:
            self.outbox = Outbox(profile_dir, self.client, settings=settings)
        except (OSError, sqlite3.Error) as error:
            # Recall still works; writes are refused, since they could not be made durable.
            log.warning("memory writes disabled: the outbox in %s cannot be opened: %s", profile_dir, error)
            self.degraded = f"outbox unavailable: {error}"
        self._enter(session_id)

    # -- state ----------------------------------------------------------------------------

    def _enter(self, session_id: str) -> None:
        with self._lock:
            self.session_id = session_id
            self.verdict: Verdict = judge(self.host, session_id)
            stored = self.outbox.store.session_state(session_id) if self.outbox else None
            self._state = stored or SessionState(session_id, 0)
            self._prefetch: Flight | None = None

    @property
    def scope(self) -> Scope | None:
        return self.verdict.scope

    @property
    def turn_index(self) -> int:
        """The index the next captured turn of this session will get."""
        return self._state.next_turn

    @property
    def extraction_unavailable(self) -> str | None:
        """Why turns are delivered without extraction (the server has no model), or None."""
        return self.outbox.extraction_unavailable if self.outbox else None

    @property
    def last_recall_error(self) -> str | None:
        return self.last_recall.error if self.last_recall else None

    def _skip(self, reason: str) -> None:
        self.last_skip = reason
        log.debug("memory write skipped: %s", reason)

    def _writable(self) -> Target | None:
        """Where writes go now: the scope, or the scope the server has still to resolve (its
        participant a raw id, queued as ``userId``: sdk/writing.py); None, and why, if nowhere."""
        if self.degraded:
            self._skip(self.degraded)
            return None
        target = self.verdict.target
        if target is None:
            self._skip(self.verdict.reason or "writes are not allowed here")
        return target

    # -- recall ---------------------------------------------------------------------------

    def prefetch(self, query: str) -> None:
        """Start recall for ``query`` now; ``before_inference(query)`` will use its answer."""
        flight = self._launch(normalize(query, QUERY_CAP)) if self.verdict.can_read else None
        with self._lock:
            self._prefetch = flight

    def before_inference(self, query: str) -> str:
        """Return the context block for ``query`` within the recall timeout ("" if none)."""
        return self.recall(query).context

    def recall(self, query: str) -> RecallOutcome:
        """Recall for ``query``: the server's hits and this process's recent writes, merged.

        Never blocks longer than ``recall_timeout``; on timeout or error the server's part is
        empty and ``error`` (also ``last_recall_error``) says why.
        """
        started = time.monotonic()
        self._resolve_late(self.recall_timeout)  # within recall's budget: it counts from ``started``
        text = normalize(query, QUERY_CAP)
        scope = self.verdict.scope
        if not self.verdict.can_read or scope is None or not text or self._closed:
            why = self.verdict.reason if not self.verdict.can_read else "closed" if self._closed else "empty query"
            return self._record(RecallOutcome("", error=why or "recall is not allowed here"))
        with self._lock:
            flight, self._prefetch = self._prefetch, None
        if flight is None or (flight.session_id, flight.query) != (self.session_id, text):
            flight = self._launch(text)
        remote, error = answer(flight, started + self.recall_timeout, self.recall_timeout, self.recall_limit)
        exclude = self.session_id if self.exclude_current_session else None
        cached = self._cache.search(text, scope, limit=self.recall_limit, exclude_session_id=exclude)
        items = merge(remote, cached, self.recall_limit)
        elapsed = (time.monotonic() - started) * 1000
        return self._record(RecallOutcome(render(items, self.context_chars), tuple(items), error, elapsed))

    def _record(self, outcome: RecallOutcome) -> RecallOutcome:
        self.last_recall = outcome
        return outcome

    def _launch(self, text: str) -> Flight | None:
        if not text or self.verdict.scope is None or self._closed:
            return None
        exclude = self.session_id if self.exclude_current_session else None
        request = recall_request(text, self.verdict.scope, self.recall_limit, exclude)
        return launch(self._pool, self.client, request, (self.session_id, text), self.recall_timeout)

    # -- writes ---------------------------------------------------------------------------

    def after_turn(
        self,
        user: str,
        assistant: str,
        *,
        ok: bool = True,
        turn_id: str | None = None,
        turn_index: int | None = None,
    ) -> str | None:
        """Queue the completed turn as one episode; return its eventId, or None (see ``last_skip``).

        Calling it again with the same pair (a retry) returns the same id and queues nothing.
        ``turn_id`` is the host's own id for the turn (stored as ``sourceEventId``);
        ``turn_index`` overrides the session's counter for hosts that number turns themselves.
        """
        if not ok:
            self._skip("the turn failed or did not complete")
            return None
        return self._capture(user, assistant, turn_id, "engramdb-sdk:after_turn", turn_index)

    def capture(self, messages: Sequence[Message]) -> str | None:
        """Queue the latest completed user/assistant pair of a transcript (nothing else of it)."""
        pair = latest_pair(messages)
        if pair is None:
            self._skip("no completed user/assistant pair")
            return None
        return self._capture(*pair, None, "engramdb-sdk:capture")

    def before_compaction(self, messages: Sequence[Message]) -> str | None:
        """Queue the last eligible pair before the host discards the transcript."""
        pair = latest_pair(messages)
        if pair is None:
            self._skip("no completed user/assistant pair before compaction")
            return None
        return self._capture(*pair, None, "engramdb-sdk:before_compaction")

    def _capture(
        self, user: str, assistant: str, turn_id: str | None, provenance: str, turn_index: int | None = None
    ) -> str | None:
        scope = self._writable()
        if scope is None:
            return None
        captured = clean_pair(user, assistant)
        if isinstance(captured, Refused):
            self._skip(captured.reason)
            return None
        with self._lock:
            marks = [self.session_id, turn_id or "", -1 if turn_index is None else turn_index]
            digest = sha256_hex(canonical_json([*marks, captured.user, captured.assistant]))
            if digest == self._state.last_digest:
                self.last_skip = None
                return self._state.last_event_id
            turn = self._state.next_turn if turn_index is None else turn_index
            try:
                body = episode_body(self.host, self.session_id, captured, turn, turn_id, provenance)
                prepared = prepare_episode(scope, body)
                state = SessionState(self.session_id, max(self._state.next_turn, turn + 1), digest, prepared.key)
                assert self.outbox is not None  # _writable checked it
                queue_episode(self.outbox, prepared, session=state, extract=self.extract)
            except (InvalidInputError, OutboxFullError) as error:
                self._skip(error.message)
                return None
            self._state = state
        self._keep(prepared, scope, shown_text(captured))
        self.last_skip = None
        return prepared.key

    def remember(
        self,
        subject: str,
        kind: str,
        text: str,
        *,
        confidence: float = 0.9,
        valid_from: str | None = None,
        valid_until: str | None = None,
        supersedes_fact_id: str | None = None,
        source_event_id: str | None = None,
        origin: str = "stated",
    ) -> str | None:
        """Queue a fact the host states (trusted, origin ``stated``; ``derived`` when a model's tool
        call wrote it, so the trust policy applies); return its factId, or None: nothing was
        queued (``last_skip`` says why), or the participant is not resolved yet (``last_skip`` is
        None: the fact is queued and the server computes its id, which covers the participant).

        Raises InvalidInputError for a malformed subject, kind, date or confidence, or a
        ``valid_until`` that is not after ``valid_from``.
        """
        scope = self._writable()
        if scope is None:
            return None
        cleaned = clean_text(text, FACT_CHARS)
        if isinstance(cleaned, Refused):
            self._skip(f"fact text: {cleaned.reason}")
            return None
        body = fact_body(
            self.host,
            subject,
            kind,
            cleaned[0],
            confidence=confidence,
            source_event_id=source_event_id or self._state.last_event_id or f"{self.session_id}:remember",
            valid_from=valid_from,
            valid_until=valid_until,
            supersedes_fact_id=supersedes_fact_id,
        )
        prepared = prepare_fact(scope, body)
        assert self.outbox is not None  # _writable checked it
        try:
            queue_fact(self.outbox, prepared, origin=origin)
        except OutboxFullError as error:
            self._skip(error.message)
            return None
        self._keep(prepared, scope, cleaned[0], (subject, kind))
        self.last_skip = None
        return prepared.memory_id

    def _keep(self, prepared: Prepared, target: Target, text: str, slot: tuple[str, str] | None = None) -> None:
        """Remember a queued write for recall in this process (the recent-write cache); a write
        whose participant is not resolved yet is left out, as recall waits for the scope anyway."""
        event = prepared.event
        if event is not None and isinstance(target, Scope):
            source = "EPISODE" if isinstance(event, Episode) else "MEMORY_FACT"
            subject, kind = slot or (None, None)
            kept = CachedMemory(prepared.key, source, text, target, event.trust_class, self.session_id, subject, kind)
            self._cache.add(kept)

    def memory_action(
        self, action: str, *, subject: str, kind: str, text: str, replaces: str | None = None
    ) -> str | None:
        """A memory tool's request: ``add``, or ``replace`` (with ``replaces``); others do nothing."""
        if action == "add":
            return self.remember(subject, kind, text)
        if action == "replace" and replaces:
            return self.remember(subject, kind, text, supersedes_fact_id=replaces)
        self._skip(f"unsupported memory action {action!r}")
        return None

    # -- session boundaries ---------------------------------------------------------------

    def switch_session(self, session_id: str) -> None:
        """Continue as ``session_id``: its own turn counter; prefetched recall dropped."""
        self._enter(session_id)

    def end_session(self, timeout: float | None = None) -> bool:
        """Flush for at most ``timeout`` s (default ``flush_timeout``), release the caches.

        Returns True if nothing is left undelivered.
        """
        delivered = self.outbox.flush(self.flush_timeout if timeout is None else timeout) if self.outbox else False
        with self._lock:
            self._prefetch = None
            self.last_recall = None
        self._cache.clear()
        return delivered

    def close(self, timeout: float | None = None) -> bool:
        """Flush for at most ``timeout`` s, then stop; undelivered events stay on disk."""
        if self._closed:
            return False
        self._closed = True
        delivered = self.outbox.close(self.flush_timeout if timeout is None else timeout) if self.outbox else False
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._cache.clear()
        if self._owns_client:
            self.client.close()
        return delivered

    def __enter__(self) -> MemorySession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
