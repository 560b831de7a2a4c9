"""The webhook deliverer: the change feed, sent to every endpoint, in order, exactly once in effect.

A thread looks for endpoints with something due (a pending delivery whose time has come, or new
changes after their cursor: two statements a tenant, however many endpoints it has) and hands
each to a small pool, one try in flight per endpoint. A try signs the stored body afresh
(``EngramDB-Signature``) and POSTs it; a 2xx acknowledges it, anything else (another status, a
refused connection, a timeout) is a failed try, retried with backoff and kept as a dead letter
after the last. Everything is in the store (core/changes/outbox.py), so a
server killed mid-delivery sends that same delivery again when it is back.

A try has ``timeout_seconds`` in all, however slowly the endpoint answers (httpx's own timeouts
are per read: an answer dripped a byte at a time held a thread for as long as it dripped), and
only its status is read (the name's lookup aside: the resolver has its own time). One tenant's
endpoints hold at most all threads but one (when there are two or more), taking turns, least
recently started first, so that another tenant's deliveries are never all queued behind a tenant's
slow endpoints.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import anyio
import httpx

from engramdb import __version__, clock, tls
from engramdb.config import WebhookSettings
from engramdb.core.changes import feed, outbox
from engramdb.core.changes.secrets import KeyFile, check_of
from engramdb.core.changes.signing import signature
from engramdb.models.webhooks import SIGNATURE_HEADER
from engramdb.storage.feed.port import DeliveryRow, WebhookRow
from engramdb.storage.port import Store

log = logging.getLogger(__name__)
KEY_CHANGED = "the server's webhook key is not the one this endpoint's secret came from: register it again"


class WebhookWorker:
    """Delivers every tenant's change feed to its endpoints, in the background."""

    def __init__(self, store: Store, settings: WebhookSettings, keys: KeyFile) -> None:
        self._store = store
        self._settings = settings
        self._keys = keys
        self._retry = outbox.Retry(settings.attempts, settings.backoff_seconds, settings.max_backoff_seconds)
        self._tls = tls.context()
        self._pool = ThreadPoolExecutor(settings.concurrency, thread_name_prefix="engram-webhook")
        self._per_tenant = max(1, settings.concurrency - 1)  # one thread is always left to the other tenants
        self._busy: set[tuple[str, str]] = set()  # (tenant, endpoint) with a try in flight
        self._started: dict[tuple[str, str], int] = {}  # the turn each endpoint's last try started in
        self._turns = 0
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="engram-webhooks", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop looking for work and wait for the tries in flight (each ends by its timeout)."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                self.dispatch()
            except Exception:  # the job boundary: log with its traceback, look again next time
                log.exception("webhook dispatch failed")
            self._wake.wait(self._settings.poll_seconds)

    def dispatch(self) -> int:
        """Start a try for every endpoint with none in flight, a tenant's least recently started first
        and as many as its share of the threads; return how many were started."""
        started, listed = 0, set[tuple[str, str]]()
        for name in self._store.tenant_names():
            tenant = self._store.tenant(name)
            head, now = tenant.changes.head(), clock.now_text()
            endpoints = tenant.webhooks.list_with_pending()
            listed.update((name, w.webhook_id) for w, _ in endpoints)
            # Only endpoints with work: idle ones and those waiting out a backoff took turns with them
            # (behind 99 in backoff, an endpoint with a new change waited 15.6 s for its first try).
            waiting = [w for w, at in endpoints if outbox.waiting(w, at, head, now)]
            for webhook in sorted(waiting, key=lambda w: self._started.get((name, w.webhook_id), -1)):
                key = (name, webhook.webhook_id)
                with self._lock:
                    if key in self._busy:
                        continue
                    if sum(owner == name for owner, _ in self._busy) >= self._per_tenant:
                        break  # the others' turns come first at the next look (no spinning on idle ones)
                    self._busy.add(key)
                    self._turns += 1
                    self._started[key] = self._turns
                self._pool.submit(self._step, name, webhook.webhook_id)
                started += 1
        self._started = {key: turn for key, turn in self._started.items() if key in listed}  # deleted ones go
        return started

    def step(self, tenant_name: str, webhook_id: str) -> str | None:
        """Try the endpoint's due delivery, if any; return how it went (None: nothing was due; "passed":
        nothing to send in a whole scan of the feed, MAX_SCAN entries of other kinds, and more behind)."""
        tenant = self._store.tenant(tenant_name)
        webhook = tenant.webhooks.get_webhook(webhook_id)
        if webhook is None:
            return None  # deleted meanwhile
        found = outbox.due(tenant, tenant_name, webhook, self._settings.batch_size)
        delivery = found.delivery
        if delivery is None:
            # Nothing to send. A try that passed over a whole scan of other kinds has more behind it: look
            # again at once. One that reached the head waits for the next poll (not a try per write).
            return "passed" if found.passed >= feed.MAX_SCAN else None
        secret = self._keys.secret(tenant_name, webhook_id, webhook.secret_salt)
        status: int | None
        error: str | None
        if check_of(secret) != webhook.secret_check:
            status, error = None, KEY_CHANGED
        else:
            status, error = self._send(webhook, delivery, secret)
        if error is None:
            tenant.webhooks.acknowledge(delivery, clock.now_text())
            log.debug("webhook %s acknowledged %s", webhook_id, delivery.delivery_id)
            return "delivered"
        if outbox.failed(tenant, delivery, self._retry, error, status):
            log.error("webhook %s: delivery %s is a dead letter: %s", webhook_id, delivery.delivery_id, error)
            return "dead"
        log.warning(
            "webhook %s: delivery %s failed (try %d): %s",
            webhook_id,
            delivery.delivery_id,
            delivery.attempts + 1,
            error,
        )
        return "failed"

    def _step(self, tenant_name: str, webhook_id: str) -> None:
        more = False
        try:
            more = self.step(tenant_name, webhook_id) is not None
        except Exception:  # the job boundary: log with its traceback, try again next time
            log.exception("webhook %s of tenant %s: delivery failed", webhook_id, tenant_name)
        finally:
            with self._lock:
                self._busy.discard((tenant_name, webhook_id))
        if more:  # it may have more: look again at once (once it is free to be tried, or the look passes it by)
            self._wake.set()

    def _send(self, webhook: WebhookRow, delivery: DeliveryRow, secret: str) -> tuple[int | None, str | None]:
        """POST one delivery; return the status and, unless it was a 2xx, why it failed."""
        body = delivery.body.encode()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": f"EngramDB-Webhooks/{__version__}",
            SIGNATURE_HEADER: signature(secret, body, int(time.time())),
            "EngramDB-Delivery": delivery.delivery_id,
            "EngramDB-Webhook": webhook.webhook_id,
        }
        try:
            status = anyio.run(self._post, webhook.url, body, headers)
        except TimeoutError:
            return None, f"no answer within {self._settings.timeout_seconds:g} s"
        except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as error:  # an address httpx cannot use: a failed try
            return None, f"{type(error).__name__}: {error}"
        if 200 <= status < 300:
            return status, None
        return status, f"HTTP {status}"

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        """The status of one POST, the whole try within the timeout; the answer's body is not read."""
        timeout = self._settings.timeout_seconds
        with anyio.fail_after(timeout):
            async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, verify=self._tls) as http:
                async with http.stream("POST", url, content=body, headers=headers) as answer:
                    return answer.status_code
