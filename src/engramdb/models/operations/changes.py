"""The change feed and the webhooks that carry it (docs/operations.md#the-change-feed-and-webhooks)."""

from __future__ import annotations

from typing import Any

from engramdb.models.changes import ChangePage, ChangeQuery
from engramdb.models.operation import Cli, Operation
from engramdb.models.webhooks import (
    DeadLetterList,
    DeadLetterQuery,
    ReplayRequest,
    ReplayResult,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
)

_WEBHOOK_ID = {"webhook_id": "the endpoint's id (wh_…)"}

LIST_CHANGES = Operation(
    name="list_changes",
    method="GET",
    path="/v1/changes",
    tag="changes",
    output=ChangePage,
    permission="memory.read",
    query=ChangeQuery,
    summary="What changed in the scopes the key may read, in order, after a cursor (?after=).",
    description="Created, updated, superseded, retracted, archived, restored, expired, deleted, forgotten, "
    "reviewed and marked episodes, facts, records and relationships, as the audit log recorded them: ids, "
    "kinds, times and scopes, never text. Read on from nextAfter; a change of a scope the key may not name "
    "is never listed, and the cursor passes it.",
    cli=Cli(("changes", "list")),
)

CREATE_WEBHOOK = Operation(
    name="create_webhook",
    method="POST",
    path="/v1/webhooks",
    tag="webhooks",
    output=WebhookCreated,
    permission="webhooks.manage",
    body=WebhookCreate,
    status=201,
    example={"url": "https://example.com/engramdb", "kinds": ["created", "deleted", "forgotten"]},
    summary="Register an endpoint for the change feed (admin keys only); its signing secret is shown once.",
    description="Deliveries are POSTs of JSON signed with EngramDB-Signature: t=<unix time>,v1=<hex "
    "HMAC-SHA256(secret, t.body)>, sent in order, retried with backoff, kept as dead letters after the last "
    "try. The first covers the changes after the feed's head at registration (or after `after`). A tenant "
    "has at most 100 endpoints: one more answers 409 naming url.",
    cli=Cli(("webhooks", "create"), positional=("url",)),  # --url names the server to ask
)

LIST_WEBHOOKS = Operation(
    name="list_webhooks",
    method="GET",
    path="/v1/webhooks",
    tag="webhooks",
    output=WebhookList,
    permission="webhooks.manage",
    summary="The tenant's webhook endpoints, with where each is in the feed (admin keys only).",
    cli=Cli(("webhooks", "list")),
)

DELETE_WEBHOOK: Operation[None] = Operation(
    name="delete_webhook",
    method="DELETE",
    path="/v1/webhooks/{webhook_id}",
    tag="webhooks",
    output=None,
    permission="webhooks.manage",
    path_params=_WEBHOOK_ID,
    errors=(404,),
    summary="Remove a webhook endpoint and the deliveries it had not acknowledged (admin keys only).",
    cli=Cli(("webhooks", "delete"), done="deleted {webhook_id}"),
)

LIST_DEAD_LETTERS = Operation(
    name="list_dead_letters",
    method="GET",
    path="/v1/webhooks/{webhook_id}/dead-letters",
    tag="webhooks",
    output=DeadLetterList,
    permission="webhooks.manage",
    path_params=_WEBHOOK_ID,
    query=DeadLetterQuery,
    errors=(404,),
    summary="An endpoint's deliveries that failed their last try (admin keys only).",
    cli=Cli(("webhooks", "dead-letters")),
)

REPLAY_DEAD_LETTERS = Operation(
    name="replay_dead_letters",
    method="POST",
    path="/v1/webhooks/{webhook_id}/replay",
    tag="webhooks",
    output=ReplayResult,
    permission="webhooks.manage",
    path_params=_WEBHOOK_ID,
    body=ReplayRequest,
    body_optional=True,
    example={"deliveryId": "wh_3f9a0c1d2e4b5a69.41-57"},
    errors=(404,),
    summary="Send an endpoint's dead deliveries again, or the one named (admin keys only).",
    description="A replayed delivery keeps its id and body (a receiver that took it already knows the id) "
    "and is sent before the endpoint's next new delivery, with a fresh signature.",
    cli=Cli(("webhooks", "replay")),
)

CHANGE_OPERATIONS: tuple[Operation[Any], ...] = (
    LIST_CHANGES,
    CREATE_WEBHOOK,
    LIST_WEBHOOKS,
    DELETE_WEBHOOK,
    LIST_DEAD_LETTERS,
    REPLAY_DEAD_LETTERS,
)
