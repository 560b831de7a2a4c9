"""Typed SDK methods for the aging operations, generated from ``engramdb.models.operations``.

Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.
"""

# ruff: noqa: E501
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from engramdb.contract.events import ScopeFields
from engramdb.models import operations_aging as aging_ops
from engramdb.models.api import (
    ForgetRequest,
    Forgotten,
    MemoryDeleted,
)
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation
from engramdb.sdk.operations import inputs_for

__all__ = ["AsyncAgingMethods", "Literal", "SyncAgingMethods"]

T = TypeVar("T")


class SyncAgingMethods:
    """The aging operations as blocking methods."""

    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def forget_participant(self, body: ForgetRequest | Mapping[str, Any]) -> Forgotten:
        """Erase everything of one participant in the tenant (admin keys only); dryRun previews."""
        return self.call(aging_ops.FORGET_PARTICIPANT, inputs_for(aging_ops.FORGET_PARTICIPANT, (), body, {}))

    def delete_episode(
        self,
        event_id: str,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> MemoryDeleted:
        """Delete an episode of the caller's scope without a trace (404 when the scope holds none); dryRun previews."""
        return self.call(aging_ops.DELETE_EPISODE, inputs_for(aging_ops.DELETE_EPISODE, (event_id,), None, {"scope": scope, "dry_run": dry_run}))

    def delete_fact(
        self,
        fact_id: str,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> MemoryDeleted:
        """Delete a fact with every version of it, without a trace (404 when the scope holds none); dryRun previews."""
        return self.call(aging_ops.DELETE_FACT, inputs_for(aging_ops.DELETE_FACT, (fact_id,), None, {"scope": scope, "dry_run": dry_run}))


class AsyncAgingMethods:
    """The aging operations as coroutine methods."""

    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def forget_participant(self, body: ForgetRequest | Mapping[str, Any]) -> Forgotten:
        """Erase everything of one participant in the tenant (admin keys only); dryRun previews."""
        return await self.call(aging_ops.FORGET_PARTICIPANT, inputs_for(aging_ops.FORGET_PARTICIPANT, (), body, {}))

    async def delete_episode(
        self,
        event_id: str,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> MemoryDeleted:
        """Delete an episode of the caller's scope without a trace (404 when the scope holds none); dryRun previews."""
        return await self.call(aging_ops.DELETE_EPISODE, inputs_for(aging_ops.DELETE_EPISODE, (event_id,), None, {"scope": scope, "dry_run": dry_run}))

    async def delete_fact(
        self,
        fact_id: str,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> MemoryDeleted:
        """Delete a fact with every version of it, without a trace (404 when the scope holds none); dryRun previews."""
        return await self.call(aging_ops.DELETE_FACT, inputs_for(aging_ops.DELETE_FACT, (fact_id,), None, {"scope": scope, "dry_run": dry_run}))
