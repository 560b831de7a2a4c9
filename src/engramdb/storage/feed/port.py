"""The storage port of the change feed and its webhooks: the rows, and what a tenant store and a
transaction add for them (``changes.py`` and ``webhooks.py`` hold the SQL both backends share).

- The feed is a view over the audit log (its ``seq`` is the cursor), joined to ``scopes``: every
  scope that ever held a memory or a record, with its five fields, kept after the scope is erased
  so that who may read a change is still known. The audit's reasons are never read.
- ``webhooks``: an endpoint, the kinds it wants, its cursor (the last change taken into a
  delivery) and the salt its secret is derived from (the secret itself is never stored).
- ``webhook_deliveries``: the outbox. A delivery holds the changes of one range of the feed; it is
  written, with the cursor moved past the range, in one transaction; removed once the endpoint
  acknowledged it; ``dead`` after its last try, until it is replayed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from engramdb.storage.rows import ScopeColumns

WEBHOOK_COLUMNS = (
    "webhook_id, url, kinds_json, secret_salt, secret_check, label, created_at, cursor, delivered, "
    "last_delivered_at, last_error"
)
DELIVERY_COLUMNS = (
    "delivery_id, webhook_id, after_seq, through_seq, changes, body, state, attempts, next_at, last_error, "
    "last_status, created_at, dead_at"
)


@dataclass(frozen=True)
class ChangeRow:
    """An audit entry that changed what a scope holds, with its scope's fields (None when unknown)."""

    seq: int
    at: str
    action: str
    actor_role: str | None
    target_kind: str | None
    target_id: str | None
    scope_key: str | None
    scope: ScopeColumns | None


@dataclass(frozen=True)
class WebhookRow:
    """A registered endpoint and where it is in the feed."""

    webhook_id: str
    url: str
    kinds_json: str  # the change kinds it receives, as a JSON list (empty: every kind)
    secret_salt: str
    secret_check: str  # a digest of the secret, to tell a changed server key from a sound one
    label: str | None
    created_at: str
    cursor: int  # the last audit seq taken into a delivery (or passed over: no change of its kinds)
    delivered: int = 0
    last_delivered_at: str | None = None
    last_error: str | None = None


@dataclass(frozen=True)
class DeliveryRow:
    """One delivery: the changes of the feed after ``after_seq`` through ``through_seq``."""

    delivery_id: str
    webhook_id: str
    after_seq: int
    through_seq: int
    changes: int
    body: str  # the JSON sent, signed afresh at each try
    state: str  # pending or dead
    attempts: int
    next_at: str
    last_error: str | None
    last_status: int | None
    created_at: str
    dead_at: str | None = None


class ChangeReads(Protocol):
    """The feed of one tenant: audit entries of the actions that change a scope, in order."""

    def head(self) -> int:
        """Return the last audit seq (0 when there is none)."""
        ...

    def changes(
        self, after_seq: int, limit: int, actions: Sequence[str], *, through_seq: int | None, scope_key: str | None
    ) -> list[ChangeRow]:
        """Return up to ``limit`` entries of these actions after ``after_seq`` (through ``through_seq``,
        of one scope if given), in seq order."""
        ...


class WebhookStore(Protocol):
    """A tenant's endpoints and their outbox; each write commits on its own."""

    def list_webhooks(self) -> list[WebhookRow]: ...

    def list_with_pending(self) -> list[tuple[WebhookRow, str | None]]:
        """Every endpoint, with the time its first pending delivery is due (None: none is pending)."""
        ...

    def get_webhook(self, webhook_id: str) -> WebhookRow | None: ...

    def next_delivery(self, webhook_id: str) -> DeliveryRow | None:
        """Return the endpoint's pending delivery that comes first in the feed, if any."""
        ...

    def open_delivery(self, cursor: int, delivery: DeliveryRow) -> bool:
        """Store ``delivery`` and move its endpoint's cursor from ``cursor`` to its ``through_seq``,
        together; False (nothing written) if the cursor is no longer ``cursor``."""
        ...

    def pass_over(self, webhook_id: str, cursor: int, through_seq: int) -> bool:
        """Move the cursor past a range with no change of the endpoint's kinds (False: it had moved)."""
        ...

    def acknowledge(self, delivery: DeliveryRow, at: str) -> None:
        """Remove an acknowledged delivery and count it."""
        ...

    def fail(self, delivery: DeliveryRow, *, error: str, status: int | None, next_at: str, dead_at: str | None) -> None:
        """Record a failed try: retried at ``next_at``, or dead from ``dead_at``."""
        ...

    def dead_count(self, webhook_id: str, limit: int) -> int:
        """How many dead deliveries an endpoint holds, counted up to ``limit``."""
        ...

    def dead_letters(self, webhook_id: str | None, limit: int) -> list[DeliveryRow]:
        """Return dead deliveries (of one endpoint, or all), oldest first."""
        ...


class WebhookWrites(Protocol):
    """An admin's changes to the endpoints, inside a store transaction (audited by the caller)."""

    def webhook_count(self) -> int: ...

    def add_webhook(self, row: WebhookRow) -> None: ...

    def delete_webhook(self, webhook_id: str) -> bool:
        """Remove an endpoint and its outbox; False if there was none."""
        ...

    def replay_dead(self, webhook_id: str, delivery_id: str | None, at: str) -> list[str]:
        """Make the endpoint's dead deliveries (or the one named) pending again; return their ids."""
        ...


class FeedStores(Protocol):
    """What a tenant store offers for the feed and its webhooks."""

    @property
    def changes(self) -> ChangeReads: ...

    @property
    def webhooks(self) -> WebhookStore: ...
