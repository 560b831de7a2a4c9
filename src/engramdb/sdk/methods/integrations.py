"""Typed SDK methods for the integrations operations, generated from ``engramdb.models.operations``.

Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.
"""

# ruff: noqa: F401 (mypy needs each model's module: through the package alone it reads Any)
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from engramdb import contract, models
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation
from engramdb.sdk.operations import inputs_for

# The models are annotations only, each named by its module: typing.get_type_hints imports it then (the
# packages' __getattr__), and an area's first call imports its operations, so the SDK imports none up front.
if TYPE_CHECKING:
    import engramdb.contract.events
    import engramdb.models.fact_search
    import engramdb.models.scopes

__all__ = ["AsyncIntegrationsMethods", "Literal", "SyncIntegrationsMethods"]

T = TypeVar("T")


class SyncIntegrationsMethods:
    """The integrations operations as blocking methods."""

    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def resolve_scope(
        self,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.scopes.ScopeResolution:
        """Check the key and resolve a scope: a userId becomes its participantScopeHash (the salt stays here)."""
        from engramdb.models.operations import integrations as integrations_ops

        return self.call(integrations_ops.RESOLVE_SCOPE, inputs_for(integrations_ops.RESOLVE_SCOPE, (), scope, {}))

    def search_facts(self, body: models.fact_search.FactSearch | Mapping[str, Any]) -> models.fact_search.FactPage:
        """Current facts under a subject prefix whose JSON text meets conditions, ranked or newest first."""
        from engramdb.models.operations import integrations as integrations_ops

        return self.call(integrations_ops.SEARCH_FACTS, inputs_for(integrations_ops.SEARCH_FACTS, (), body, {}))

    def list_subjects(
        self,
        *,
        subject_prefix: str,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        after: str | None = None,
        limit: int = 100,
    ) -> models.fact_search.SubjectList:
        """The distinct subjects of current facts under a prefix, in code point order, a page at a time."""
        from engramdb.models.operations import integrations as integrations_ops

        return self.call(
            integrations_ops.LIST_SUBJECTS,
            inputs_for(
                integrations_ops.LIST_SUBJECTS,
                (),
                None,
                {"subject_prefix": subject_prefix, "scope": scope, "after": after, "limit": limit},
            ),
        )


class AsyncIntegrationsMethods:
    """The integrations operations as coroutine methods."""

    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def resolve_scope(
        self,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.scopes.ScopeResolution:
        """Check the key and resolve a scope: a userId becomes its participantScopeHash (the salt stays here)."""
        from engramdb.models.operations import integrations as integrations_ops

        return await self.call(
            integrations_ops.RESOLVE_SCOPE, inputs_for(integrations_ops.RESOLVE_SCOPE, (), scope, {})
        )

    async def search_facts(
        self,
        body: models.fact_search.FactSearch | Mapping[str, Any],
    ) -> models.fact_search.FactPage:
        """Current facts under a subject prefix whose JSON text meets conditions, ranked or newest first."""
        from engramdb.models.operations import integrations as integrations_ops

        return await self.call(integrations_ops.SEARCH_FACTS, inputs_for(integrations_ops.SEARCH_FACTS, (), body, {}))

    async def list_subjects(
        self,
        *,
        subject_prefix: str,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        after: str | None = None,
        limit: int = 100,
    ) -> models.fact_search.SubjectList:
        """The distinct subjects of current facts under a prefix, in code point order, a page at a time."""
        from engramdb.models.operations import integrations as integrations_ops

        return await self.call(
            integrations_ops.LIST_SUBJECTS,
            inputs_for(
                integrations_ops.LIST_SUBJECTS,
                (),
                None,
                {"subject_prefix": subject_prefix, "scope": scope, "after": after, "limit": limit},
            ),
        )
