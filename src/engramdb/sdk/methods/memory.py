"""Typed SDK methods for the memory operations, generated from ``engramdb.models.operations``.

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
    import engramdb.contract.writes
    import engramdb.models.admin
    import engramdb.models.memories
    import engramdb.models.recall

__all__ = ["AsyncMemoryMethods", "Literal", "SyncMemoryMethods"]

T = TypeVar("T")


class SyncMemoryMethods:
    """The memory operations as blocking methods."""

    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def health(self) -> models.admin.Health:
        """Liveness, version, embedder and storage of the server."""
        from engramdb.models.operations import memories as memories_ops

        return self.call(memories_ops.HEALTH, inputs_for(memories_ops.HEALTH, (), None, {}))

    def write_episode(
        self,
        body: contract.writes.EpisodeWrite | Mapping[str, Any],
        *,
        extract: bool = False,
    ) -> models.memories.WriteResponse:
        """Store an episode (201), or return the one already stored with this id (200)."""
        from engramdb.models.operations import memories as memories_ops

        return self.call(
            memories_ops.WRITE_EPISODE, inputs_for(memories_ops.WRITE_EPISODE, (), body, {"extract": extract})
        )

    def write_episode_batch(
        self,
        bodies: models.memories.EpisodeBatch | Mapping[str, Any] | list[dict[str, Any]],
        *,
        extract: bool = False,
        dry_run: bool = False,
    ) -> models.memories.EpisodeBatchResult:
        """Store up to 100 episodes in one transaction; each item gets its own status and body."""
        from engramdb.models.operations import memories as memories_ops

        return self.call(
            memories_ops.WRITE_EPISODE_BATCH,
            inputs_for(memories_ops.WRITE_EPISODE_BATCH, (), bodies, {"extract": extract, "dry_run": dry_run}),
        )

    def write_fact(
        self,
        body: contract.writes.FactWrite | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> models.memories.WriteResponse:
        """Store a fact (201), or return the one already stored with this id (200)."""
        from engramdb.models.operations import memories as memories_ops

        return self.call(memories_ops.WRITE_FACT, inputs_for(memories_ops.WRITE_FACT, (), body, {"origin": origin}))

    def get_episode(
        self,
        event_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.memories.MemoryView:
        """One episode of the caller's scope, with its embedding state."""
        from engramdb.models.operations import memories as memories_ops

        return self.call(
            memories_ops.GET_EPISODE, inputs_for(memories_ops.GET_EPISODE, (event_id,), None, {"scope": scope})
        )

    def get_fact(
        self,
        fact_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.memories.MemoryView:
        """One fact of the caller's scope, with its lifecycle and embedding state."""
        from engramdb.models.operations import memories as memories_ops

        return self.call(memories_ops.GET_FACT, inputs_for(memories_ops.GET_FACT, (fact_id,), None, {"scope": scope}))

    def find_memory(
        self,
        memory_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.memories.MemoryView:
        """One episode or fact by id alone, in whichever scope the key may name holds it."""
        from engramdb.models.operations import memories as memories_ops

        return self.call(
            memories_ops.FIND_MEMORY, inputs_for(memories_ops.FIND_MEMORY, (memory_id,), None, {"scope": scope})
        )

    def list_episodes(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        session_id: str | None = None,
        after: str | None = None,
        before: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
        count: bool = False,
    ) -> models.memories.EpisodeList:
        """A scope's episodes, newest first (observedAt, then write order), a page at a time."""
        from engramdb.models.operations import memories as memories_ops

        return self.call(
            memories_ops.LIST_EPISODES,
            inputs_for(
                memories_ops.LIST_EPISODES,
                (),
                None,
                {
                    "scope": scope,
                    "session_id": session_id,
                    "after": after,
                    "before": before,
                    "cursor": cursor,
                    "limit": limit,
                    "count": count,
                },
            ),
        )

    def list_facts(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        subject_key: str | None = None,
        kind: str | None = None,
        limit: int = 100,
        as_of: str | None = None,
        valid_at: str | None = None,
        include_history: bool = False,
        include_pending: bool = False,
        cursor: str | None = None,
    ) -> models.memories.FactList:
        """Current facts of the caller's scope (or as of / valid at a time, or with history)."""
        from engramdb.models.operations import memories as memories_ops

        return self.call(
            memories_ops.LIST_FACTS,
            inputs_for(
                memories_ops.LIST_FACTS,
                (),
                None,
                {
                    "scope": scope,
                    "subject_key": subject_key,
                    "kind": kind,
                    "limit": limit,
                    "as_of": as_of,
                    "valid_at": valid_at,
                    "include_history": include_history,
                    "include_pending": include_pending,
                    "cursor": cursor,
                },
            ),
        )

    def recall(self, body: models.recall.RecallRequest | Mapping[str, Any] | str) -> models.recall.RecallResponse:
        """Ranked memories of the caller's scope and the formatted context block."""
        from engramdb.models.operations import recall as recall_ops

        return self.call(recall_ops.RECALL, inputs_for(recall_ops.RECALL, (), body, {}))


class AsyncMemoryMethods:
    """The memory operations as coroutine methods."""

    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def health(self) -> models.admin.Health:
        """Liveness, version, embedder and storage of the server."""
        from engramdb.models.operations import memories as memories_ops

        return await self.call(memories_ops.HEALTH, inputs_for(memories_ops.HEALTH, (), None, {}))

    async def write_episode(
        self,
        body: contract.writes.EpisodeWrite | Mapping[str, Any],
        *,
        extract: bool = False,
    ) -> models.memories.WriteResponse:
        """Store an episode (201), or return the one already stored with this id (200)."""
        from engramdb.models.operations import memories as memories_ops

        return await self.call(
            memories_ops.WRITE_EPISODE, inputs_for(memories_ops.WRITE_EPISODE, (), body, {"extract": extract})
        )

    async def write_episode_batch(
        self,
        bodies: models.memories.EpisodeBatch | Mapping[str, Any] | list[dict[str, Any]],
        *,
        extract: bool = False,
        dry_run: bool = False,
    ) -> models.memories.EpisodeBatchResult:
        """Store up to 100 episodes in one transaction; each item gets its own status and body."""
        from engramdb.models.operations import memories as memories_ops

        return await self.call(
            memories_ops.WRITE_EPISODE_BATCH,
            inputs_for(memories_ops.WRITE_EPISODE_BATCH, (), bodies, {"extract": extract, "dry_run": dry_run}),
        )

    async def write_fact(
        self,
        body: contract.writes.FactWrite | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> models.memories.WriteResponse:
        """Store a fact (201), or return the one already stored with this id (200)."""
        from engramdb.models.operations import memories as memories_ops

        return await self.call(
            memories_ops.WRITE_FACT, inputs_for(memories_ops.WRITE_FACT, (), body, {"origin": origin})
        )

    async def get_episode(
        self,
        event_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.memories.MemoryView:
        """One episode of the caller's scope, with its embedding state."""
        from engramdb.models.operations import memories as memories_ops

        return await self.call(
            memories_ops.GET_EPISODE, inputs_for(memories_ops.GET_EPISODE, (event_id,), None, {"scope": scope})
        )

    async def get_fact(
        self,
        fact_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.memories.MemoryView:
        """One fact of the caller's scope, with its lifecycle and embedding state."""
        from engramdb.models.operations import memories as memories_ops

        return await self.call(
            memories_ops.GET_FACT, inputs_for(memories_ops.GET_FACT, (fact_id,), None, {"scope": scope})
        )

    async def find_memory(
        self,
        memory_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.memories.MemoryView:
        """One episode or fact by id alone, in whichever scope the key may name holds it."""
        from engramdb.models.operations import memories as memories_ops

        return await self.call(
            memories_ops.FIND_MEMORY, inputs_for(memories_ops.FIND_MEMORY, (memory_id,), None, {"scope": scope})
        )

    async def list_episodes(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        session_id: str | None = None,
        after: str | None = None,
        before: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
        count: bool = False,
    ) -> models.memories.EpisodeList:
        """A scope's episodes, newest first (observedAt, then write order), a page at a time."""
        from engramdb.models.operations import memories as memories_ops

        return await self.call(
            memories_ops.LIST_EPISODES,
            inputs_for(
                memories_ops.LIST_EPISODES,
                (),
                None,
                {
                    "scope": scope,
                    "session_id": session_id,
                    "after": after,
                    "before": before,
                    "cursor": cursor,
                    "limit": limit,
                    "count": count,
                },
            ),
        )

    async def list_facts(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        subject_key: str | None = None,
        kind: str | None = None,
        limit: int = 100,
        as_of: str | None = None,
        valid_at: str | None = None,
        include_history: bool = False,
        include_pending: bool = False,
        cursor: str | None = None,
    ) -> models.memories.FactList:
        """Current facts of the caller's scope (or as of / valid at a time, or with history)."""
        from engramdb.models.operations import memories as memories_ops

        return await self.call(
            memories_ops.LIST_FACTS,
            inputs_for(
                memories_ops.LIST_FACTS,
                (),
                None,
                {
                    "scope": scope,
                    "subject_key": subject_key,
                    "kind": kind,
                    "limit": limit,
                    "as_of": as_of,
                    "valid_at": valid_at,
                    "include_history": include_history,
                    "include_pending": include_pending,
                    "cursor": cursor,
                },
            ),
        )

    async def recall(self, body: models.recall.RecallRequest | Mapping[str, Any] | str) -> models.recall.RecallResponse:
        """Ranked memories of the caller's scope and the formatted context block."""
        from engramdb.models.operations import recall as recall_ops

        return await self.call(recall_ops.RECALL, inputs_for(recall_ops.RECALL, (), body, {}))
