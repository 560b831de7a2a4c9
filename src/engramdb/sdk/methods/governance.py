"""Typed SDK methods for the governance operations, generated from ``engramdb.models.operations``.

Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.
"""

# ruff: noqa: E501, F401 (mypy needs each model's module: through the package alone it reads Any)
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
    import engramdb.models.admin
    import engramdb.models.lifecycle
    import engramdb.models.memories
    import engramdb.models.policy
    import engramdb.models.scopes
    import engramdb.models.series

__all__ = ["AsyncGovernanceMethods", "Literal", "SyncGovernanceMethods"]

T = TypeVar("T")


class SyncGovernanceMethods:
    """The governance operations as blocking methods."""

    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def list_scopes(
        self,
        *,
        scope_key: str | None = None,
        limit: int = 200,
        order: Literal["recent", "key"] = "recent",
        cursor: str | None = None,
    ) -> models.scopes.ScopeList:
        """The tenant's scopes that hold memories and that the key may name, with counts."""
        from engramdb.models.operations import governance as governance_ops

        return self.call(
            governance_ops.LIST_SCOPES,
            inputs_for(
                governance_ops.LIST_SCOPES,
                (),
                None,
                {"scope_key": scope_key, "limit": limit, "order": order, "cursor": cursor},
            ),
        )

    def review_queue(
        self,
        *,
        kind: str | None = None,
        subject_key: str | None = None,
        older_than_seconds: float | None = None,
        limit: int = 100,
        count: bool = False,
    ) -> models.lifecycle.ReviewQueue:
        """Facts awaiting review in the tenant, oldest first (reviewer or admin keys)."""
        from engramdb.models.operations import review as review_ops

        return self.call(
            review_ops.REVIEW_QUEUE,
            inputs_for(
                review_ops.REVIEW_QUEUE,
                (),
                None,
                {
                    "kind": kind,
                    "subject_key": subject_key,
                    "older_than_seconds": older_than_seconds,
                    "limit": limit,
                    "count": count,
                },
            ),
        )

    def approve(
        self,
        fact_id: str,
        body: models.lifecycle.ReviewDecision | Mapping[str, Any] | None = None,
    ) -> models.memories.WriteResponse:
        """Make a pending fact current (tombstones and the age guard apply)."""
        from engramdb.models.operations import review as review_ops

        return self.call(review_ops.APPROVE, inputs_for(review_ops.APPROVE, (fact_id,), body, {}))

    def reject(
        self,
        fact_id: str,
        body: models.lifecycle.RejectDecision | Mapping[str, Any],
    ) -> models.memories.MemoryView:
        """Reject a pending fact, saying why; its value is tombstoned with the reason."""
        from engramdb.models.operations import review as review_ops

        return self.call(review_ops.REJECT, inputs_for(review_ops.REJECT, (fact_id,), body, {}))

    def edit_and_approve(
        self,
        fact_id: str,
        body: models.lifecycle.EditAndApprove | Mapping[str, Any],
    ) -> models.memories.WriteResponse:
        """Replace a pending fact's text with the reviewer's, and approve it."""
        from engramdb.models.operations import review as review_ops

        return self.call(review_ops.EDIT_AND_APPROVE, inputs_for(review_ops.EDIT_AND_APPROVE, (fact_id,), body, {}))

    def audit(
        self,
        *,
        after: int = 0,
        limit: int = 100,
        action: str | None = None,
        target_id: str | None = None,
        actor_key_id: str | None = None,
    ) -> models.admin.AuditPage:
        """The tenant's hash-chained audit log, in order (reviewer or admin keys)."""
        from engramdb.models.operations import governance as governance_ops

        return self.call(
            governance_ops.AUDIT,
            inputs_for(
                governance_ops.AUDIT,
                (),
                None,
                {
                    "after": after,
                    "limit": limit,
                    "action": action,
                    "target_id": target_id,
                    "actor_key_id": actor_key_id,
                },
            ),
        )

    def verify_audit(self) -> models.admin.AuditVerdict:
        """Recompute the tenant's audit chain and name its first broken entry (reviewer or admin keys)."""
        from engramdb.models.operations import governance as governance_ops

        return self.call(governance_ops.VERIFY_AUDIT, inputs_for(governance_ops.VERIFY_AUDIT, (), None, {}))

    def get_policy(self) -> models.policy.TenantPolicy:
        """The tenant's policy: trust table, multi-valued kinds, what a tombstoned value does."""
        from engramdb.models.operations import governance as governance_ops

        return self.call(governance_ops.GET_POLICY, inputs_for(governance_ops.GET_POLICY, (), None, {}))

    def put_policy(self, policy: models.policy.TenantPolicy | Mapping[str, Any]) -> models.policy.TenantPolicy:
        """Replace the tenant's policy (admin keys only; audited)."""
        from engramdb.models.operations import governance as governance_ops

        return self.call(governance_ops.PUT_POLICY, inputs_for(governance_ops.PUT_POLICY, (), policy, {}))

    def create_key(self, body: models.admin.KeyCreateRequest | Mapping[str, Any]) -> models.admin.KeyCreated:
        """Create a key in the caller's tenant (admin keys only); the token is shown once."""
        from engramdb.models.operations import governance as governance_ops

        return self.call(governance_ops.CREATE_KEY, inputs_for(governance_ops.CREATE_KEY, (), body, {}))

    def list_keys(self) -> models.admin.KeyList:
        """Every key of the caller's tenant (admin keys only); secrets are never returned."""
        from engramdb.models.operations import governance as governance_ops

        return self.call(governance_ops.LIST_KEYS, inputs_for(governance_ops.LIST_KEYS, (), None, {}))

    def revoke_key(self, key_id: str) -> None:
        """Revoke a key of the caller's tenant (admin keys only; not the tenant's last admin key)."""
        from engramdb.models.operations import governance as governance_ops

        self.call(governance_ops.REVOKE_KEY, inputs_for(governance_ops.REVOKE_KEY, (key_id,), None, {}))
        return None

    def usage_series(
        self,
        *,
        since: str | None = None,
        until: str | None = None,
        bucket: Literal["hour", "day"] = "hour",
    ) -> models.series.UsageSeries:
        """The tenant's memories, recalls and their time, review backlog and model calls over time (reviewer or admin keys)."""
        from engramdb.models.operations import series as series_ops

        return self.call(
            series_ops.USAGE_SERIES,
            inputs_for(series_ops.USAGE_SERIES, (), None, {"since": since, "until": until, "bucket": bucket}),
        )


class AsyncGovernanceMethods:
    """The governance operations as coroutine methods."""

    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def list_scopes(
        self,
        *,
        scope_key: str | None = None,
        limit: int = 200,
        order: Literal["recent", "key"] = "recent",
        cursor: str | None = None,
    ) -> models.scopes.ScopeList:
        """The tenant's scopes that hold memories and that the key may name, with counts."""
        from engramdb.models.operations import governance as governance_ops

        return await self.call(
            governance_ops.LIST_SCOPES,
            inputs_for(
                governance_ops.LIST_SCOPES,
                (),
                None,
                {"scope_key": scope_key, "limit": limit, "order": order, "cursor": cursor},
            ),
        )

    async def review_queue(
        self,
        *,
        kind: str | None = None,
        subject_key: str | None = None,
        older_than_seconds: float | None = None,
        limit: int = 100,
        count: bool = False,
    ) -> models.lifecycle.ReviewQueue:
        """Facts awaiting review in the tenant, oldest first (reviewer or admin keys)."""
        from engramdb.models.operations import review as review_ops

        return await self.call(
            review_ops.REVIEW_QUEUE,
            inputs_for(
                review_ops.REVIEW_QUEUE,
                (),
                None,
                {
                    "kind": kind,
                    "subject_key": subject_key,
                    "older_than_seconds": older_than_seconds,
                    "limit": limit,
                    "count": count,
                },
            ),
        )

    async def approve(
        self,
        fact_id: str,
        body: models.lifecycle.ReviewDecision | Mapping[str, Any] | None = None,
    ) -> models.memories.WriteResponse:
        """Make a pending fact current (tombstones and the age guard apply)."""
        from engramdb.models.operations import review as review_ops

        return await self.call(review_ops.APPROVE, inputs_for(review_ops.APPROVE, (fact_id,), body, {}))

    async def reject(
        self,
        fact_id: str,
        body: models.lifecycle.RejectDecision | Mapping[str, Any],
    ) -> models.memories.MemoryView:
        """Reject a pending fact, saying why; its value is tombstoned with the reason."""
        from engramdb.models.operations import review as review_ops

        return await self.call(review_ops.REJECT, inputs_for(review_ops.REJECT, (fact_id,), body, {}))

    async def edit_and_approve(
        self,
        fact_id: str,
        body: models.lifecycle.EditAndApprove | Mapping[str, Any],
    ) -> models.memories.WriteResponse:
        """Replace a pending fact's text with the reviewer's, and approve it."""
        from engramdb.models.operations import review as review_ops

        return await self.call(
            review_ops.EDIT_AND_APPROVE, inputs_for(review_ops.EDIT_AND_APPROVE, (fact_id,), body, {})
        )

    async def audit(
        self,
        *,
        after: int = 0,
        limit: int = 100,
        action: str | None = None,
        target_id: str | None = None,
        actor_key_id: str | None = None,
    ) -> models.admin.AuditPage:
        """The tenant's hash-chained audit log, in order (reviewer or admin keys)."""
        from engramdb.models.operations import governance as governance_ops

        return await self.call(
            governance_ops.AUDIT,
            inputs_for(
                governance_ops.AUDIT,
                (),
                None,
                {
                    "after": after,
                    "limit": limit,
                    "action": action,
                    "target_id": target_id,
                    "actor_key_id": actor_key_id,
                },
            ),
        )

    async def verify_audit(self) -> models.admin.AuditVerdict:
        """Recompute the tenant's audit chain and name its first broken entry (reviewer or admin keys)."""
        from engramdb.models.operations import governance as governance_ops

        return await self.call(governance_ops.VERIFY_AUDIT, inputs_for(governance_ops.VERIFY_AUDIT, (), None, {}))

    async def get_policy(self) -> models.policy.TenantPolicy:
        """The tenant's policy: trust table, multi-valued kinds, what a tombstoned value does."""
        from engramdb.models.operations import governance as governance_ops

        return await self.call(governance_ops.GET_POLICY, inputs_for(governance_ops.GET_POLICY, (), None, {}))

    async def put_policy(self, policy: models.policy.TenantPolicy | Mapping[str, Any]) -> models.policy.TenantPolicy:
        """Replace the tenant's policy (admin keys only; audited)."""
        from engramdb.models.operations import governance as governance_ops

        return await self.call(governance_ops.PUT_POLICY, inputs_for(governance_ops.PUT_POLICY, (), policy, {}))

    async def create_key(self, body: models.admin.KeyCreateRequest | Mapping[str, Any]) -> models.admin.KeyCreated:
        """Create a key in the caller's tenant (admin keys only); the token is shown once."""
        from engramdb.models.operations import governance as governance_ops

        return await self.call(governance_ops.CREATE_KEY, inputs_for(governance_ops.CREATE_KEY, (), body, {}))

    async def list_keys(self) -> models.admin.KeyList:
        """Every key of the caller's tenant (admin keys only); secrets are never returned."""
        from engramdb.models.operations import governance as governance_ops

        return await self.call(governance_ops.LIST_KEYS, inputs_for(governance_ops.LIST_KEYS, (), None, {}))

    async def revoke_key(self, key_id: str) -> None:
        """Revoke a key of the caller's tenant (admin keys only; not the tenant's last admin key)."""
        from engramdb.models.operations import governance as governance_ops

        await self.call(governance_ops.REVOKE_KEY, inputs_for(governance_ops.REVOKE_KEY, (key_id,), None, {}))
        return None

    async def usage_series(
        self,
        *,
        since: str | None = None,
        until: str | None = None,
        bucket: Literal["hour", "day"] = "hour",
    ) -> models.series.UsageSeries:
        """The tenant's memories, recalls and their time, review backlog and model calls over time (reviewer or admin keys)."""
        from engramdb.models.operations import series as series_ops

        return await self.call(
            series_ops.USAGE_SERIES,
            inputs_for(series_ops.USAGE_SERIES, (), None, {"since": since, "until": until, "bucket": bucket}),
        )
