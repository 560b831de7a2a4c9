"""Typed SDK methods for the knowledge operations, generated from ``engramdb.models.operations``.

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
    import engramdb.models.knowledge

__all__ = ["AsyncKnowledgeMethods", "Literal", "SyncKnowledgeMethods"]

T = TypeVar("T")


class SyncKnowledgeMethods:
    """The knowledge operations as blocking methods."""

    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def write_records(
        self,
        body: models.knowledge.RecordWrite | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> models.knowledge.RecordsWritten:
        """Write records (with nested children) under an UPPER_CASE label; mergeBy makes it an idempotent upsert."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(
            knowledge_ops.WRITE_RECORDS, inputs_for(knowledge_ops.WRITE_RECORDS, (), body, {"origin": origin})
        )

    def get_record(
        self,
        record_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.knowledge.RecordView:
        """One record of the caller's scope."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(
            knowledge_ops.GET_RECORD, inputs_for(knowledge_ops.GET_RECORD, (record_id,), None, {"scope": scope})
        )

    def update_record(
        self,
        record_id: str,
        body: models.knowledge.RecordChange | Mapping[str, Any],
    ) -> models.knowledge.RecordView:
        """Set properties of a record (null removes one); the previous ones stay in its history."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(knowledge_ops.UPDATE_RECORD, inputs_for(knowledge_ops.UPDATE_RECORD, (record_id,), body, {}))

    def record_history(
        self,
        record_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        cursor: str | None = None,
        limit: int = 100,
    ) -> models.knowledge.RecordHistory:
        """A record's versions, oldest first, a page at a time (the last page ends with the current one)."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(
            knowledge_ops.RECORD_HISTORY,
            inputs_for(
                knowledge_ops.RECORD_HISTORY, (record_id,), None, {"scope": scope, "cursor": cursor, "limit": limit}
            ),
        )

    def list_relationships(
        self,
        *,
        id: str,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        kind: Literal["RECORD", "EPISODE", "MEMORY_FACT"] = "RECORD",
        type: str | None = None,
        direction: Literal["out", "in", "both"] = "both",
        cursor: str | None = None,
        limit: int = 100,
    ) -> models.knowledge.RelationshipList:
        """The relationships of a record, an episode or a fact (a fact's DERIVED_FROM its episode too), oldest first, a page at a time."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(
            knowledge_ops.LIST_RELATIONSHIPS,
            inputs_for(
                knowledge_ops.LIST_RELATIONSHIPS,
                (),
                None,
                {
                    "id": id,
                    "scope": scope,
                    "kind": kind,
                    "type": type,
                    "direction": direction,
                    "cursor": cursor,
                    "limit": limit,
                },
            ),
        )

    def delete_record(
        self,
        record_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
        cascade: bool = False,
    ) -> models.knowledge.Deleted:
        """Delete a record (and, with cascade, what is nested under it); dryRun previews."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(
            knowledge_ops.DELETE_RECORD,
            inputs_for(
                knowledge_ops.DELETE_RECORD,
                (record_id,),
                None,
                {"scope": scope, "dry_run": dry_run, "cascade": cascade},
            ),
        )

    def search_records(
        self,
        body: models.knowledge.RecordSearch | Mapping[str, Any],
    ) -> models.knowledge.RecordSearchResult:
        """Records matching a where (nested labels, operators, order, page), their aggregates, or by meaning."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(knowledge_ops.SEARCH_RECORDS, inputs_for(knowledge_ops.SEARCH_RECORDS, (), body, {}))

    def delete_records(self, body: models.knowledge.DeleteRequest | Mapping[str, Any]) -> models.knowledge.Deleted:
        """Delete the records a where matches; dryRun answers what would go."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(knowledge_ops.DELETE_RECORDS, inputs_for(knowledge_ops.DELETE_RECORDS, (), body, {}))

    def link_records(self, body: models.knowledge.LinkRequest | Mapping[str, Any]) -> models.knowledge.RelationshipView:
        """Create a typed, directed relationship between two records (or a record and a memory) of one scope."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(knowledge_ops.LINK_RECORDS, inputs_for(knowledge_ops.LINK_RECORDS, (), body, {}))

    def unlink_records(self, body: models.knowledge.UnlinkRequest | Mapping[str, Any]) -> models.knowledge.Unlinked:
        """Remove a relationship."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(knowledge_ops.UNLINK_RECORDS, inputs_for(knowledge_ops.UNLINK_RECORDS, (), body, {}))

    def records_schema(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        label: str | None = None,
    ) -> models.knowledge.KnowledgeSchema:
        """The scope's labels, their properties and kinds, and the relationships between labels."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(
            knowledge_ops.RECORDS_SCHEMA,
            inputs_for(knowledge_ops.RECORDS_SCHEMA, (), None, {"scope": scope, "label": label}),
        )

    def export_records(self, body: models.knowledge.ExportRequest | Mapping[str, Any]) -> models.knowledge.GraphExport:
        """A subgraph: the records a where matches, what they link to (depth hops), and the relationships."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return self.call(knowledge_ops.EXPORT_RECORDS, inputs_for(knowledge_ops.EXPORT_RECORDS, (), body, {}))


class AsyncKnowledgeMethods:
    """The knowledge operations as coroutine methods."""

    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def write_records(
        self,
        body: models.knowledge.RecordWrite | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> models.knowledge.RecordsWritten:
        """Write records (with nested children) under an UPPER_CASE label; mergeBy makes it an idempotent upsert."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(
            knowledge_ops.WRITE_RECORDS, inputs_for(knowledge_ops.WRITE_RECORDS, (), body, {"origin": origin})
        )

    async def get_record(
        self,
        record_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
    ) -> models.knowledge.RecordView:
        """One record of the caller's scope."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(
            knowledge_ops.GET_RECORD, inputs_for(knowledge_ops.GET_RECORD, (record_id,), None, {"scope": scope})
        )

    async def update_record(
        self,
        record_id: str,
        body: models.knowledge.RecordChange | Mapping[str, Any],
    ) -> models.knowledge.RecordView:
        """Set properties of a record (null removes one); the previous ones stay in its history."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(
            knowledge_ops.UPDATE_RECORD, inputs_for(knowledge_ops.UPDATE_RECORD, (record_id,), body, {})
        )

    async def record_history(
        self,
        record_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        cursor: str | None = None,
        limit: int = 100,
    ) -> models.knowledge.RecordHistory:
        """A record's versions, oldest first, a page at a time (the last page ends with the current one)."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(
            knowledge_ops.RECORD_HISTORY,
            inputs_for(
                knowledge_ops.RECORD_HISTORY, (record_id,), None, {"scope": scope, "cursor": cursor, "limit": limit}
            ),
        )

    async def list_relationships(
        self,
        *,
        id: str,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        kind: Literal["RECORD", "EPISODE", "MEMORY_FACT"] = "RECORD",
        type: str | None = None,
        direction: Literal["out", "in", "both"] = "both",
        cursor: str | None = None,
        limit: int = 100,
    ) -> models.knowledge.RelationshipList:
        """The relationships of a record, an episode or a fact (a fact's DERIVED_FROM its episode too), oldest first, a page at a time."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(
            knowledge_ops.LIST_RELATIONSHIPS,
            inputs_for(
                knowledge_ops.LIST_RELATIONSHIPS,
                (),
                None,
                {
                    "id": id,
                    "scope": scope,
                    "kind": kind,
                    "type": type,
                    "direction": direction,
                    "cursor": cursor,
                    "limit": limit,
                },
            ),
        )

    async def delete_record(
        self,
        record_id: str,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
        cascade: bool = False,
    ) -> models.knowledge.Deleted:
        """Delete a record (and, with cascade, what is nested under it); dryRun previews."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(
            knowledge_ops.DELETE_RECORD,
            inputs_for(
                knowledge_ops.DELETE_RECORD,
                (record_id,),
                None,
                {"scope": scope, "dry_run": dry_run, "cascade": cascade},
            ),
        )

    async def search_records(
        self,
        body: models.knowledge.RecordSearch | Mapping[str, Any],
    ) -> models.knowledge.RecordSearchResult:
        """Records matching a where (nested labels, operators, order, page), their aggregates, or by meaning."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(knowledge_ops.SEARCH_RECORDS, inputs_for(knowledge_ops.SEARCH_RECORDS, (), body, {}))

    async def delete_records(
        self,
        body: models.knowledge.DeleteRequest | Mapping[str, Any],
    ) -> models.knowledge.Deleted:
        """Delete the records a where matches; dryRun answers what would go."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(knowledge_ops.DELETE_RECORDS, inputs_for(knowledge_ops.DELETE_RECORDS, (), body, {}))

    async def link_records(
        self,
        body: models.knowledge.LinkRequest | Mapping[str, Any],
    ) -> models.knowledge.RelationshipView:
        """Create a typed, directed relationship between two records (or a record and a memory) of one scope."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(knowledge_ops.LINK_RECORDS, inputs_for(knowledge_ops.LINK_RECORDS, (), body, {}))

    async def unlink_records(
        self,
        body: models.knowledge.UnlinkRequest | Mapping[str, Any],
    ) -> models.knowledge.Unlinked:
        """Remove a relationship."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(knowledge_ops.UNLINK_RECORDS, inputs_for(knowledge_ops.UNLINK_RECORDS, (), body, {}))

    async def records_schema(
        self,
        *,
        scope: contract.events.ScopeFields | Mapping[str, Any] | None = None,
        label: str | None = None,
    ) -> models.knowledge.KnowledgeSchema:
        """The scope's labels, their properties and kinds, and the relationships between labels."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(
            knowledge_ops.RECORDS_SCHEMA,
            inputs_for(knowledge_ops.RECORDS_SCHEMA, (), None, {"scope": scope, "label": label}),
        )

    async def export_records(
        self,
        body: models.knowledge.ExportRequest | Mapping[str, Any],
    ) -> models.knowledge.GraphExport:
        """A subgraph: the records a where matches, what they link to (depth hops), and the relationships."""
        from engramdb.models.operations import knowledge as knowledge_ops

        return await self.call(knowledge_ops.EXPORT_RECORDS, inputs_for(knowledge_ops.EXPORT_RECORDS, (), body, {}))
