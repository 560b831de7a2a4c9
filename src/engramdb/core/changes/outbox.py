"""An endpoint's outbox: which delivery is due next, and what a try's outcome does to it.

Exactly once and in order, per endpoint: a delivery covers one range of the feed (after its
endpoint's cursor, through at most ``batch_size`` changes of its kinds); it is stored together
with the cursor's move past that range, and the next one is opened only when it was acknowledged
or given up. After a crash the same delivery, with the same id and body, is sent again: a receiver
that remembers delivery ids takes it once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from engramdb import clock
from engramdb.contract.canonical import canonical_json
from engramdb.core.changes.feed import change_view, read
from engramdb.storage.feed.port import DeliveryRow, WebhookRow
from engramdb.storage.port import TenantStore


@dataclass(frozen=True)
class Retry:
    """How failed tries are retried."""

    attempts: int  # tries before a delivery is dead
    backoff_seconds: float  # the wait after the first failure; doubles
    max_backoff_seconds: float

    def wait(self, attempts: int) -> float:
        """Seconds to wait after the ``attempts``-th failed try."""
        return float(min(self.max_backoff_seconds, self.backoff_seconds * 2.0 ** max(0, attempts - 1)))


def kinds_of(webhook: WebhookRow) -> list[str]:
    return [str(k) for k in json.loads(webhook.kinds_json)]


def waiting(webhook: WebhookRow, pending_at: str | None, head: int, now: str) -> bool:
    """Whether ``due`` may find work for the endpoint now, told without reading the feed: its pending
    delivery's time has come, or with none pending, the log has entries past its cursor."""
    if pending_at is not None:
        return pending_at <= now
    return webhook.cursor < head


@dataclass(frozen=True)
class Due:
    """What an endpoint has to try now."""

    delivery: DeliveryRow | None  # None: nothing to send now
    passed: int = 0  # feed entries of other kinds the cursor moved past to find that out


def due(tenant: TenantStore, tenant_name: str, webhook: WebhookRow, batch_size: int) -> Due:
    """The endpoint's delivery to try now: its pending one when due, else a new one of the changes
    after its cursor."""
    pending = tenant.webhooks.next_delivery(webhook.webhook_id)
    now = clock.now_text()
    if pending is not None:
        return Due(pending if pending.next_at <= now else None)
    window = read(tenant, webhook.cursor, batch_size, kinds_of(webhook))
    if window.next_after <= webhook.cursor:
        return Due(None)
    if not window.rows:  # only changes of other kinds: nothing to send, the cursor moves on
        moved = tenant.webhooks.pass_over(webhook.webhook_id, webhook.cursor, window.next_after)
        return Due(None, window.next_after - webhook.cursor if moved else 0)
    delivery_id = f"{webhook.webhook_id}.{webhook.cursor + 1}-{window.next_after}"
    body = {
        "type": "engramdb.changes",
        "deliveryId": delivery_id,
        "webhookId": webhook.webhook_id,
        "tenant": tenant_name,
        "after": webhook.cursor,
        "through": window.next_after,
        "changes": [change_view(r).wire() for r in window.rows],
    }
    delivery = DeliveryRow(
        delivery_id=delivery_id,
        webhook_id=webhook.webhook_id,
        after_seq=webhook.cursor,
        through_seq=window.next_after,
        changes=len(window.rows),
        body=canonical_json(body),
        state="pending",
        attempts=0,
        next_at=now,
        last_error=None,
        last_status=None,
        created_at=now,
    )
    return Due(delivery if tenant.webhooks.open_delivery(webhook.cursor, delivery) else None)


def failed(tenant: TenantStore, delivery: DeliveryRow, retry: Retry, error: str, status: int | None) -> bool:
    """Record a failed try; return True if it was the last (the delivery is now a dead letter)."""
    tries = delivery.attempts + 1
    dead = tries >= retry.attempts
    tenant.webhooks.fail(
        delivery,
        error=error[:1000],
        status=status,
        next_at=clock.later(retry.wait(tries)),
        dead_at=clock.now_text() if dead else None,
    )
    return dead
