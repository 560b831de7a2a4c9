"""Typed SDK methods for the lifecycle operations, generated from ``engramdb.models.operations``.

Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.
"""

# ruff: noqa: E501, F401 (mypy needs each model's module: through the package alone it reads Any)
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
    import engramdb.models.lifecycle
    import engramdb.models.memories

__all__ = ["AsyncLifecycleMethods", "Literal", "SyncLifecycleMethods"]

T = TypeVar("T")


class SyncLifecycleMethods:
    """The lifecycle operations as blocking methods."""

    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def correct_fact(
        self,
        fact_id: str,
        body: models.lifecycle.CorrectRequest | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> models.memories.WriteResponse:
        """Replace a current fact with a corrected one; the old value is tombstoned."""
        from engramdb.models.operations import lifecycle as lifecycle_ops

        return self.call(
            lifecycle_ops.CORRECT_FACT, inputs_for(lifecycle_ops.CORRECT_FACT, (fact_id,), body, {"origin": origin})
        )

    def retract_fact(
        self,
        fact_id: str,
        body: models.lifecycle.RetractRequest | Mapping[str, Any],
    ) -> models.memories.MemoryView:
        """Retract a current fact that has no replacement; its value is tombstoned."""
        from engramdb.models.operations import lifecycle as lifecycle_ops

        return self.call(lifecycle_ops.RETRACT_FACT, inputs_for(lifecycle_ops.RETRACT_FACT, (fact_id,), body, {}))

    def fact_history(
        self,
        fact_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        cursor: str | None = None,
        limit: int = 100,
        newest_first: bool = False,
    ) -> models.lifecycle.FactHistory:
        """A fact's versions, oldest first (or newest first), a page at a time, with their reasons and the values they retired."""
        from engramdb.models.operations import lifecycle as lifecycle_ops

        return self.call(
            lifecycle_ops.FACT_HISTORY,
            inputs_for(
                lifecycle_ops.FACT_HISTORY,
                (fact_id,),
                None,
                {"scope": scope, "cursor": cursor, "limit": limit, "newest_first": newest_first},
            ),
        )

    def list_tombstones(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        subject_key: str | None = None,
        kind: str | None = None,
        include_lifted: bool = False,
    ) -> models.lifecycle.TombstoneList:
        """Values refused in the caller's scope."""
        from engramdb.models.operations import lifecycle as lifecycle_ops

        return self.call(
            lifecycle_ops.LIST_TOMBSTONES,
            inputs_for(
                lifecycle_ops.LIST_TOMBSTONES,
                (),
                None,
                {"scope": scope, "subject_key": subject_key, "kind": kind, "include_lifted": include_lifted},
            ),
        )

    def lift_tombstone(
        self,
        tombstone_id: str,
        body: models.lifecycle.LiftRequest | Mapping[str, Any],
    ) -> models.lifecycle.TombstoneView:
        """Let a tombstoned value become current again (reviewer or admin keys)."""
        from engramdb.models.operations import lifecycle as lifecycle_ops

        return self.call(
            lifecycle_ops.LIFT_TOMBSTONE, inputs_for(lifecycle_ops.LIFT_TOMBSTONE, (tombstone_id,), body, {})
        )


class AsyncLifecycleMethods:
    """The lifecycle operations as coroutine methods."""

    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def correct_fact(
        self,
        fact_id: str,
        body: models.lifecycle.CorrectRequest | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> models.memories.WriteResponse:
        """Replace a current fact with a corrected one; the old value is tombstoned."""
        from engramdb.models.operations import lifecycle as lifecycle_ops

        return await self.call(
            lifecycle_ops.CORRECT_FACT, inputs_for(lifecycle_ops.CORRECT_FACT, (fact_id,), body, {"origin": origin})
        )

    async def retract_fact(
        self,
        fact_id: str,
        body: models.lifecycle.RetractRequest | Mapping[str, Any],
    ) -> models.memories.MemoryView:
        """Retract a current fact that has no replacement; its value is tombstoned."""
        from engramdb.models.operations import lifecycle as lifecycle_ops

        return await self.call(lifecycle_ops.RETRACT_FACT, inputs_for(lifecycle_ops.RETRACT_FACT, (fact_id,), body, {}))

    async def fact_history(
        self,
        fact_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        cursor: str | None = None,
        limit: int = 100,
        newest_first: bool = False,
    ) -> models.lifecycle.FactHistory:
        """A fact's versions, oldest first (or newest first), a page at a time, with their reasons and the values they retired."""
        from engramdb.models.operations import lifecycle as lifecycle_ops

        return await self.call(
            lifecycle_ops.FACT_HISTORY,
            inputs_for(
                lifecycle_ops.FACT_HISTORY,
                (fact_id,),
                None,
                {"scope": scope, "cursor": cursor, "limit": limit, "newest_first": newest_first},
            ),
        )

    async def list_tombstones(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        subject_key: str | None = None,
        kind: str | None = None,
        include_lifted: bool = False,
    ) -> models.lifecycle.TombstoneList:
        """Values refused in the caller's scope."""
        from engramdb.models.operations import lifecycle as lifecycle_ops

        return await self.call(
            lifecycle_ops.LIST_TOMBSTONES,
            inputs_for(
                lifecycle_ops.LIST_TOMBSTONES,
                (),
                None,
                {"scope": scope, "subject_key": subject_key, "kind": kind, "include_lifted": include_lifted},
            ),
        )

    async def lift_tombstone(
        self,
        tombstone_id: str,
        body: models.lifecycle.LiftRequest | Mapping[str, Any],
    ) -> models.lifecycle.TombstoneView:
        """Let a tombstoned value become current again (reviewer or admin keys)."""
        from engramdb.models.operations import lifecycle as lifecycle_ops

        return await self.call(
            lifecycle_ops.LIFT_TOMBSTONE, inputs_for(lifecycle_ops.LIFT_TOMBSTONE, (tombstone_id,), body, {})
        )
