"""Webhook endpoints and their outbox, one implementation for both backends.

``WebhookLog`` is what the delivery worker reads and writes, each write in a transaction of its
own (``atomic``); ``WebhookWritesSQL`` is the admin's side inside a store transaction, which the
caller audits. The cursor moves only together with the delivery that covers what it passed
(``open_delivery``), so a crash never leaves a change neither delivered nor waiting to be.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from engramdb.storage.common import row_values
from engramdb.storage.feed.port import DELIVERY_COLUMNS, WEBHOOK_COLUMNS, DeliveryRow, WebhookRow
from engramdb.storage.knowledge.rows import Run
from engramdb.storage.knowledge.sql import Dialect

Atomic = Callable[[], AbstractContextManager[Run]]  # a statement runner inside one transaction
_WEBHOOK_WIDTH = len(WEBHOOK_COLUMNS.split(","))
_DELIVERY_WIDTH = len(DELIVERY_COLUMNS.split(","))


def _webhook(row: Sequence[Any]) -> WebhookRow:
    return WebhookRow(row[0], row[1], row[2], row[3], row[4], row[5], row[6], int(row[7]), int(row[8]), row[9], row[10])


def _delivery(row: Sequence[Any]) -> DeliveryRow:
    return DeliveryRow(row[0], row[1], int(row[2]), int(row[3]), int(row[4]), row[5], row[6], int(row[7]), *row[8:])


def _tenant(d: Dialect) -> tuple[str, list[Any]]:
    """The tenant column and its value, where rows carry one."""
    return ("tenant, ", [d.tenant]) if d.tenant is not None else ("", [])


class WebhookLog:
    """A tenant's endpoints and outbox (``WebhookStore``)."""

    def __init__(self, run: Run, atomic: Atomic, dialect: Dialect) -> None:
        self._run = run
        self._atomic = atomic
        self._d = dialect

    def list_webhooks(self) -> list[WebhookRow]:
        owned, params = self._d.owned("webhooks")
        rows = self._run(f"SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE {owned}cursor >= 0 ORDER BY created_at", params)
        return [_webhook(r) for r in rows]

    def list_with_pending(self) -> list[tuple[WebhookRow, str | None]]:
        owned, params = self._d.owned("w")
        outbox, outbox_params = self._d.owned("d")
        columns = ", ".join("w." + c.strip() for c in WEBHOOK_COLUMNS.split(","))
        rows = self._run(
            f"SELECT {columns}, (SELECT d.next_at FROM webhook_deliveries d WHERE {outbox}d.webhook_id = w.webhook_id "
            f"AND d.state = 'pending' ORDER BY d.after_seq LIMIT 1) "
            f"FROM webhooks w WHERE {owned}w.cursor >= 0 ORDER BY w.created_at",
            [*outbox_params, *params],
        )
        return [(_webhook(r), r[_WEBHOOK_WIDTH]) for r in rows]

    def get_webhook(self, webhook_id: str) -> WebhookRow | None:
        owned, params = self._d.owned("webhooks")
        rows = self._run(
            f"SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE {owned}webhook_id = {self._d.mark}", [*params, webhook_id]
        )
        return _webhook(rows[0]) if rows else None

    def next_delivery(self, webhook_id: str) -> DeliveryRow | None:
        m = self._d.mark
        owned, params = self._d.owned("webhook_deliveries")
        rows = self._run(
            f"SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE {owned}webhook_id = {m} AND state = 'pending' "
            f"ORDER BY after_seq LIMIT 1",
            [*params, webhook_id],
        )
        return _delivery(rows[0]) if rows else None

    def open_delivery(self, cursor: int, delivery: DeliveryRow) -> bool:
        tenant, values = _tenant(self._d)
        with self._atomic() as run:
            if not self._moved(run, delivery.webhook_id, cursor, delivery.through_seq):
                return False
            run(
                f"INSERT INTO webhook_deliveries ({tenant}{DELIVERY_COLUMNS}) "
                f"VALUES ({self._d.marks(len(values) + _DELIVERY_WIDTH)})",
                [*values, *row_values(delivery)],
            )
            return True

    def pass_over(self, webhook_id: str, cursor: int, through_seq: int) -> bool:
        with self._atomic() as run:
            return self._moved(run, webhook_id, cursor, through_seq)

    def _moved(self, run: Run, webhook_id: str, cursor: int, to: int) -> bool:
        m = self._d.mark
        owned, params = self._d.owned("webhooks")
        return bool(
            run(
                f"UPDATE webhooks SET cursor = {m} WHERE {owned}webhook_id = {m} AND cursor = {m} RETURNING cursor",
                [to, *params, webhook_id, cursor],
            )
        )

    def acknowledge(self, delivery: DeliveryRow, at: str) -> None:
        m = self._d.mark
        with self._atomic() as run:
            owned, params = self._d.owned("webhook_deliveries")
            gone = run(
                f"DELETE FROM webhook_deliveries WHERE {owned}delivery_id = {m} RETURNING 1",
                [*params, delivery.delivery_id],
            )
            if gone:  # once: a delivery acknowledged twice (two tries in flight) counts once
                owned, params = self._d.owned("webhooks")
                run(
                    f"UPDATE webhooks SET delivered = delivered + 1, last_delivered_at = {m}, last_error = NULL "
                    f"WHERE {owned}webhook_id = {m}",
                    [at, *params, delivery.webhook_id],
                )

    def fail(self, delivery: DeliveryRow, *, error: str, status: int | None, next_at: str, dead_at: str | None) -> None:
        m = self._d.mark
        with self._atomic() as run:
            owned, params = self._d.owned("webhook_deliveries")
            run(
                f"UPDATE webhook_deliveries SET attempts = attempts + 1, last_error = {m}, last_status = {m}, "
                f"next_at = {m}, state = {m}, dead_at = {m} WHERE {owned}delivery_id = {m} AND state = 'pending'",
                [error, status, next_at, "dead" if dead_at else "pending", dead_at, *params, delivery.delivery_id],
            )
            owned, params = self._d.owned("webhooks")
            run(
                f"UPDATE webhooks SET last_error = {m} WHERE {owned}webhook_id = {m}",
                [error, *params, delivery.webhook_id],
            )

    def dead_count(self, webhook_id: str, limit: int) -> int:
        m = self._d.mark
        owned, params = self._d.owned("webhook_deliveries")
        rows = self._run(  # the index of deliveries by endpoint and state alone: no body is read
            f"SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE {owned}webhook_id = {m} AND state = 'dead' "
            f"LIMIT {m}) dead",
            [*params, webhook_id, limit],
        )
        return int(rows[0][0])

    def dead_letters(self, webhook_id: str | None, limit: int) -> list[DeliveryRow]:
        m = self._d.mark
        owned, params = self._d.owned("webhook_deliveries")
        where, values = f"{owned}state = 'dead'", list(params)
        if webhook_id is not None:
            where, values = f"{where} AND webhook_id = {m}", [*values, webhook_id]
        rows = self._run(
            f"SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE {where} ORDER BY dead_at, after_seq LIMIT {m}",
            [*values, limit],
        )
        return [_delivery(r) for r in rows]


class WebhookWritesSQL:
    """The admin's writes to endpoints, inside a store transaction (``WebhookWrites``)."""

    _run: Run
    _d: Dialect

    def webhook_count(self) -> int:
        owned, params = self._d.owned("webhooks")
        return int(self._run(f"SELECT count(*) FROM webhooks WHERE {owned}TRUE", params)[0][0])

    def add_webhook(self, row: WebhookRow) -> None:
        tenant, values = _tenant(self._d)
        self._run(
            f"INSERT INTO webhooks ({tenant}{WEBHOOK_COLUMNS}) VALUES ({self._d.marks(len(values) + _WEBHOOK_WIDTH)})",
            [*values, *row_values(row)],
        )

    def delete_webhook(self, webhook_id: str) -> bool:
        m = self._d.mark
        owned, params = self._d.owned("webhook_deliveries")
        self._run(f"DELETE FROM webhook_deliveries WHERE {owned}webhook_id = {m}", [*params, webhook_id])
        owned, params = self._d.owned("webhooks")
        return bool(self._run(f"DELETE FROM webhooks WHERE {owned}webhook_id = {m} RETURNING 1", [*params, webhook_id]))

    def replay_dead(self, webhook_id: str, delivery_id: str | None, at: str) -> list[str]:
        m = self._d.mark
        owned, params = self._d.owned("webhook_deliveries")
        where, values = f"{owned}webhook_id = {m} AND state = 'dead'", [*params, webhook_id]
        if delivery_id is not None:
            where, values = f"{where} AND delivery_id = {m}", [*values, delivery_id]
        rows = self._run(
            f"UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_at = {m}, dead_at = NULL "
            f"WHERE {where} RETURNING delivery_id",
            [at, *values],
        )
        return sorted(str(r[0]) for r in rows)
