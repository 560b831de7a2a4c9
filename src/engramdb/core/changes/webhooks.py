"""Webhooks, as an admin runs them: register (the secret shown once), list, delete, the dead
letters and their replay. Each change to an endpoint is audited in its transaction."""

from __future__ import annotations

import json
import secrets

from engramdb import clock
from engramdb.audit_chain.states import digest, webhook_classes
from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.changes.secrets import KeyFile, check_of, fingerprint, new_salt
from engramdb.core.shared import Area, Shared
from engramdb.errors import ConflictError, InvalidInputError, NotFoundError
from engramdb.models.webhooks import (
    DeadLetter,
    DeadLetterList,
    DeadLetterQuery,
    ReplayRequest,
    ReplayResult,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookView,
)
from engramdb.storage.feed.port import DeliveryRow, WebhookRow
from engramdb.storage.port import TenantStore

# Endpoints one tenant may have. Each is looked at every poll and listed whole; a review registered
# 5,000 in one tenant (peers cap theirs too: a few dozen per account or hook).
MAX_WEBHOOKS = 100


class WebhookOperations(Area):
    """An admin's endpoints for the change feed."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self.keys = KeyFile(shared.settings.webhook_key_path())

    def create_webhook(self, caller: Caller, body: WebhookCreate) -> WebhookCreated:
        """Register an endpoint; its secret is in the answer, once."""
        auth.require(caller, "webhooks.manage")
        tenant = self.shared.tenant(caller)
        webhook_id = "wh_" + secrets.token_hex(8)
        head = tenant.changes.head()
        if body.after is not None and body.after > head:
            raise InvalidInputError(f"after is past the feed's head ({head})", field="after")
        salt = new_salt()
        secret = self.keys.secret(caller.tenant, webhook_id, salt)
        row = WebhookRow(
            webhook_id=webhook_id,
            url=body.url,
            kinds_json=json.dumps(sorted(set(body.kinds))),
            secret_salt=salt,
            secret_check=check_of(secret),
            label=body.label,
            created_at=clock.now_text(),
            cursor=head if body.after is None else body.after,
        )
        with tenant.transaction() as tx:
            if tx.webhook_count() >= MAX_WEBHOOKS:  # counted in the write: two at once do not both pass
                raise ConflictError(
                    f"the tenant has {MAX_WEBHOOKS} webhooks, the most it may have: delete one first",
                    field="url",
                    limit=MAX_WEBHOOKS,
                )
            tx.add_webhook(row)
            tx.audit(
                caller.audit(
                    "webhook.create",
                    target_kind="webhook",
                    target_id=webhook_id,
                    after_digest=digest(webhook_classes(row.url, row.kinds_json)),
                )
            )
        return WebhookCreated(**_view(tenant, row).model_dump(), secret=secret)

    def list_webhooks(self, caller: Caller) -> WebhookList:
        auth.require(caller, "webhooks.manage")
        tenant = self.shared.tenant(caller)
        return WebhookList(webhooks=[_view(tenant, w) for w in tenant.webhooks.list_webhooks()])

    def delete_webhook(self, caller: Caller, webhook_id: str) -> None:
        """Remove an endpoint and whatever it had not acknowledged."""
        auth.require(caller, "webhooks.manage")
        with self.shared.tenant(caller).transaction() as tx:
            if not tx.delete_webhook(webhook_id):
                raise NotFoundError(f"no webhook {webhook_id}", field="webhook_id")
            tx.audit(caller.audit("webhook.delete", target_kind="webhook", target_id=webhook_id))

    def list_dead_letters(self, caller: Caller, webhook_id: str, query: DeadLetterQuery) -> DeadLetterList:
        auth.require(caller, "webhooks.manage")
        tenant = self.shared.tenant(caller)
        _existing(tenant, webhook_id)
        return DeadLetterList(dead_letters=[_dead(d) for d in tenant.webhooks.dead_letters(webhook_id, query.limit)])

    def replay_dead_letters(self, caller: Caller, webhook_id: str, body: ReplayRequest) -> ReplayResult:
        """Make an endpoint's dead deliveries (or one of them) due again, as they were."""
        auth.require(caller, "webhooks.manage")
        tenant = self.shared.tenant(caller)
        _existing(tenant, webhook_id)
        with tenant.transaction() as tx:
            replayed = tx.replay_dead(webhook_id, body.delivery_id, clock.now_text())
            if body.delivery_id is not None and not replayed:
                raise NotFoundError(f"no dead delivery {body.delivery_id} of {webhook_id}", field="deliveryId")
            if replayed:
                tx.audit(
                    caller.audit(
                        "webhook.replay",
                        target_kind="webhook",
                        target_id=webhook_id,
                        after_digest=sha256_hex(canonical_json(replayed)),
                    )
                )
        return ReplayResult(replayed=replayed)


def _existing(tenant: TenantStore, webhook_id: str) -> WebhookRow:
    found = tenant.webhooks.get_webhook(webhook_id)
    if found is None:
        raise NotFoundError(f"no webhook {webhook_id}", field="webhook_id")
    return found


def _view(tenant: TenantStore, row: WebhookRow) -> WebhookView:
    return WebhookView(
        webhook_id=row.webhook_id,
        url=row.url,
        kinds=json.loads(row.kinds_json),
        label=row.label,
        created_at=row.created_at,
        cursor=row.cursor,
        delivered=row.delivered,
        pending=tenant.webhooks.next_delivery(row.webhook_id) is not None,
        dead_letters=tenant.webhooks.dead_count(row.webhook_id, 1000),
        last_delivered_at=row.last_delivered_at,
        last_error=row.last_error,
        secret_fingerprint=fingerprint(row.secret_check),
    )


def _dead(row: DeliveryRow) -> DeadLetter:
    return DeadLetter(
        delivery_id=row.delivery_id,
        after=row.after_seq,
        through=row.through_seq,
        changes=row.changes,
        attempts=row.attempts,
        last_error=row.last_error,
        last_status=row.last_status,
        created_at=row.created_at,
        dead_at=row.dead_at,
    )
