"""Typed SDK methods for the feed operations, generated from ``engramdb.models.operations``.

Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.
"""

# ruff: noqa: F401 (mypy needs each model's module: through the package alone it reads Any)
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from engramdb import models
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation
from engramdb.sdk.operations import inputs_for

# The models are annotations only, each named by its module: typing.get_type_hints imports it then (the
# packages' __getattr__), and an area's first call imports its operations, so the SDK imports none up front.
if TYPE_CHECKING:
    import engramdb.models.changes
    import engramdb.models.webhooks

__all__ = ["AsyncFeedMethods", "Literal", "SyncFeedMethods"]

T = TypeVar("T")


class SyncFeedMethods:
    """The feed operations as blocking methods."""

    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def list_changes(self, *, after: int = 0, limit: int = 100, kinds: str | None = None) -> models.changes.ChangePage:
        """What changed in the scopes the key may read, in order, after a cursor (?after=)."""
        from engramdb.models.operations import changes as changes_ops

        return self.call(
            changes_ops.LIST_CHANGES,
            inputs_for(changes_ops.LIST_CHANGES, (), None, {"after": after, "limit": limit, "kinds": kinds}),
        )

    def create_webhook(self, body: models.webhooks.WebhookCreate | Mapping[str, Any]) -> models.webhooks.WebhookCreated:
        """Register an endpoint for the change feed (admin keys only); its signing secret is shown once."""
        from engramdb.models.operations import changes as changes_ops

        return self.call(changes_ops.CREATE_WEBHOOK, inputs_for(changes_ops.CREATE_WEBHOOK, (), body, {}))

    def list_webhooks(self) -> models.webhooks.WebhookList:
        """The tenant's webhook endpoints, with where each is in the feed (admin keys only)."""
        from engramdb.models.operations import changes as changes_ops

        return self.call(changes_ops.LIST_WEBHOOKS, inputs_for(changes_ops.LIST_WEBHOOKS, (), None, {}))

    def delete_webhook(self, webhook_id: str) -> None:
        """Remove a webhook endpoint and the deliveries it had not acknowledged (admin keys only)."""
        from engramdb.models.operations import changes as changes_ops

        self.call(changes_ops.DELETE_WEBHOOK, inputs_for(changes_ops.DELETE_WEBHOOK, (webhook_id,), None, {}))
        return None

    def list_dead_letters(self, webhook_id: str, *, limit: int = 100) -> models.webhooks.DeadLetterList:
        """An endpoint's deliveries that failed their last try (admin keys only)."""
        from engramdb.models.operations import changes as changes_ops

        return self.call(
            changes_ops.LIST_DEAD_LETTERS,
            inputs_for(changes_ops.LIST_DEAD_LETTERS, (webhook_id,), None, {"limit": limit}),
        )

    def replay_dead_letters(
        self,
        webhook_id: str,
        body: models.webhooks.ReplayRequest | Mapping[str, Any] | None = None,
    ) -> models.webhooks.ReplayResult:
        """Send an endpoint's dead deliveries again, or the one named (admin keys only)."""
        from engramdb.models.operations import changes as changes_ops

        return self.call(
            changes_ops.REPLAY_DEAD_LETTERS, inputs_for(changes_ops.REPLAY_DEAD_LETTERS, (webhook_id,), body, {})
        )


class AsyncFeedMethods:
    """The feed operations as coroutine methods."""

    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def list_changes(
        self,
        *,
        after: int = 0,
        limit: int = 100,
        kinds: str | None = None,
    ) -> models.changes.ChangePage:
        """What changed in the scopes the key may read, in order, after a cursor (?after=)."""
        from engramdb.models.operations import changes as changes_ops

        return await self.call(
            changes_ops.LIST_CHANGES,
            inputs_for(changes_ops.LIST_CHANGES, (), None, {"after": after, "limit": limit, "kinds": kinds}),
        )

    async def create_webhook(
        self,
        body: models.webhooks.WebhookCreate | Mapping[str, Any],
    ) -> models.webhooks.WebhookCreated:
        """Register an endpoint for the change feed (admin keys only); its signing secret is shown once."""
        from engramdb.models.operations import changes as changes_ops

        return await self.call(changes_ops.CREATE_WEBHOOK, inputs_for(changes_ops.CREATE_WEBHOOK, (), body, {}))

    async def list_webhooks(self) -> models.webhooks.WebhookList:
        """The tenant's webhook endpoints, with where each is in the feed (admin keys only)."""
        from engramdb.models.operations import changes as changes_ops

        return await self.call(changes_ops.LIST_WEBHOOKS, inputs_for(changes_ops.LIST_WEBHOOKS, (), None, {}))

    async def delete_webhook(self, webhook_id: str) -> None:
        """Remove a webhook endpoint and the deliveries it had not acknowledged (admin keys only)."""
        from engramdb.models.operations import changes as changes_ops

        await self.call(changes_ops.DELETE_WEBHOOK, inputs_for(changes_ops.DELETE_WEBHOOK, (webhook_id,), None, {}))
        return None

    async def list_dead_letters(self, webhook_id: str, *, limit: int = 100) -> models.webhooks.DeadLetterList:
        """An endpoint's deliveries that failed their last try (admin keys only)."""
        from engramdb.models.operations import changes as changes_ops

        return await self.call(
            changes_ops.LIST_DEAD_LETTERS,
            inputs_for(changes_ops.LIST_DEAD_LETTERS, (webhook_id,), None, {"limit": limit}),
        )

    async def replay_dead_letters(
        self,
        webhook_id: str,
        body: models.webhooks.ReplayRequest | Mapping[str, Any] | None = None,
    ) -> models.webhooks.ReplayResult:
        """Send an endpoint's dead deliveries again, or the one named (admin keys only)."""
        from engramdb.models.operations import changes as changes_ops

        return await self.call(
            changes_ops.REPLAY_DEAD_LETTERS, inputs_for(changes_ops.REPLAY_DEAD_LETTERS, (webhook_id,), body, {})
        )
