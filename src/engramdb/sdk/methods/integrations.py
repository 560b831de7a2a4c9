"""Typed SDK methods for the integrations operations, generated from ``engramdb.models.operations``.

Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from engramdb.contract.events import ScopeFields
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation
from engramdb.models.operations import integrations as integrations_ops
from engramdb.models.scopes import ScopeResolution
from engramdb.sdk.operations import inputs_for

__all__ = ["AsyncIntegrationsMethods", "Literal", "SyncIntegrationsMethods"]

T = TypeVar("T")


class SyncIntegrationsMethods:
    """The integrations operations as blocking methods."""

    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def resolve_scope(self, scope: ScopeFields | Mapping[str, Any] | None = None) -> ScopeResolution:
        """Check the key and resolve a scope: a userId becomes its participantScopeHash (the salt stays here)."""
        return self.call(integrations_ops.RESOLVE_SCOPE, inputs_for(integrations_ops.RESOLVE_SCOPE, (), scope, {}))


class AsyncIntegrationsMethods:
    """The integrations operations as coroutine methods."""

    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def resolve_scope(self, scope: ScopeFields | Mapping[str, Any] | None = None) -> ScopeResolution:
        """Check the key and resolve a scope: a userId becomes its participantScopeHash (the salt stays here)."""
        return await self.call(
            integrations_ops.RESOLVE_SCOPE, inputs_for(integrations_ops.RESOLVE_SCOPE, (), scope, {})
        )
