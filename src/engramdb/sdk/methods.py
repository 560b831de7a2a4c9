"""Typed SDK methods, one per operation, generated from ``engramdb.models.operations``.

Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.
"""

# ruff: noqa: E501
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from engramdb.contract.events import EpisodeWrite, FactWrite, ScopeFields
from engramdb.models import operations as ops
from engramdb.models.api import (
    AuditPage,
    CorrectRequest,
    Deleted,
    DeleteRequest,
    EditAndApprove,
    EpisodeBatch,
    EpisodeBatchResult,
    EpisodeList,
    ExportRequest,
    FactHistory,
    FactList,
    GraphExport,
    Health,
    KeyCreated,
    KeyCreateRequest,
    KeyList,
    KnowledgeSchema,
    LiftRequest,
    LinkRequest,
    MemoryView,
    RecallRequest,
    RecallResponse,
    RecordChange,
    RecordHistory,
    RecordSearch,
    RecordSearchResult,
    RecordsWritten,
    RecordView,
    RecordWrite,
    RejectDecision,
    RelationshipList,
    RelationshipView,
    RetractRequest,
    ReviewDecision,
    ReviewQueue,
    TenantPolicy,
    TombstoneList,
    TombstoneView,
    Unlinked,
    UnlinkRequest,
    WriteResponse,
)
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation
from engramdb.sdk.operations import inputs_for

__all__ = ["AsyncMethods", "Literal", "SyncMethods"]

T = TypeVar("T")


class SyncMethods:
    """Every operation as a blocking method (``Client``)."""

    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def health(self) -> Health:
        """Liveness, version, embedder and storage of the server."""
        return self.call(ops.HEALTH, inputs_for(ops.HEALTH, (), None, {}))

    def write_episode(self, body: EpisodeWrite | Mapping[str, Any]) -> WriteResponse:
        """Store an episode (201), or return the one already stored with this id (200)."""
        return self.call(ops.WRITE_EPISODE, inputs_for(ops.WRITE_EPISODE, (), body, {}))

    def write_episode_batch(
        self,
        bodies: EpisodeBatch | Mapping[str, Any] | list[dict[str, Any]],
    ) -> EpisodeBatchResult:
        """Store up to 100 episodes in one transaction; each item gets its own status and body."""
        return self.call(ops.WRITE_EPISODE_BATCH, inputs_for(ops.WRITE_EPISODE_BATCH, (), bodies, {}))

    def write_fact(
        self,
        body: FactWrite | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> WriteResponse:
        """Store a fact (201), or return the one already stored with this id (200)."""
        return self.call(ops.WRITE_FACT, inputs_for(ops.WRITE_FACT, (), body, {"origin": origin}))

    def get_episode(self, event_id: str, *, scope: ScopeFields | Mapping[str, Any] | None = None) -> MemoryView:
        """One episode of the caller's scope, with its embedding state."""
        return self.call(ops.GET_EPISODE, inputs_for(ops.GET_EPISODE, (event_id,), None, {"scope": scope}))

    def get_fact(self, fact_id: str, *, scope: ScopeFields | Mapping[str, Any] | None = None) -> MemoryView:
        """One fact of the caller's scope, with its lifecycle and embedding state."""
        return self.call(ops.GET_FACT, inputs_for(ops.GET_FACT, (fact_id,), None, {"scope": scope}))

    def list_episodes(
        self,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        session_id: str | None = None,
        after: str | None = None,
        before: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> EpisodeList:
        """A scope's episodes, newest first (observedAt, then write order), a page at a time."""
        return self.call(ops.LIST_EPISODES, inputs_for(ops.LIST_EPISODES, (), None, {"scope": scope, "session_id": session_id, "after": after, "before": before, "cursor": cursor, "limit": limit}))

    def list_facts(
        self,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        subject_key: str | None = None,
        kind: str | None = None,
        limit: int = 100,
        as_of: str | None = None,
        valid_at: str | None = None,
        include_history: bool = False,
    ) -> FactList:
        """Current facts of the caller's scope (or as of / valid at a time, or with history)."""
        return self.call(ops.LIST_FACTS, inputs_for(ops.LIST_FACTS, (), None, {"scope": scope, "subject_key": subject_key, "kind": kind, "limit": limit, "as_of": as_of, "valid_at": valid_at, "include_history": include_history}))

    def correct_fact(
        self,
        fact_id: str,
        body: CorrectRequest | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> WriteResponse:
        """Replace a current fact with a corrected one; the old value is tombstoned."""
        return self.call(ops.CORRECT_FACT, inputs_for(ops.CORRECT_FACT, (fact_id,), body, {"origin": origin}))

    def retract_fact(self, fact_id: str, body: RetractRequest | Mapping[str, Any]) -> MemoryView:
        """Retract a current fact that has no replacement; its value is tombstoned."""
        return self.call(ops.RETRACT_FACT, inputs_for(ops.RETRACT_FACT, (fact_id,), body, {}))

    def fact_history(self, fact_id: str, *, scope: ScopeFields | Mapping[str, Any] | None = None) -> FactHistory:
        """Every version of a fact, oldest first, with reasons and the slot's tombstones."""
        return self.call(ops.FACT_HISTORY, inputs_for(ops.FACT_HISTORY, (fact_id,), None, {"scope": scope}))

    def list_tombstones(
        self,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        subject_key: str | None = None,
        kind: str | None = None,
        include_lifted: bool = False,
    ) -> TombstoneList:
        """Values refused in the caller's scope."""
        return self.call(ops.LIST_TOMBSTONES, inputs_for(ops.LIST_TOMBSTONES, (), None, {"scope": scope, "subject_key": subject_key, "kind": kind, "include_lifted": include_lifted}))

    def lift_tombstone(self, tombstone_id: str, body: LiftRequest | Mapping[str, Any]) -> TombstoneView:
        """Let a tombstoned value become current again (reviewer or admin keys)."""
        return self.call(ops.LIFT_TOMBSTONE, inputs_for(ops.LIFT_TOMBSTONE, (tombstone_id,), body, {}))

    def review_queue(
        self,
        *,
        kind: str | None = None,
        subject_key: str | None = None,
        older_than_seconds: float | None = None,
        limit: int = 100,
    ) -> ReviewQueue:
        """Facts awaiting review in the tenant, oldest first (reviewer or admin keys)."""
        return self.call(ops.REVIEW_QUEUE, inputs_for(ops.REVIEW_QUEUE, (), None, {"kind": kind, "subject_key": subject_key, "older_than_seconds": older_than_seconds, "limit": limit}))

    def approve(self, fact_id: str, body: ReviewDecision | Mapping[str, Any] | None = None) -> WriteResponse:
        """Make a pending fact current (tombstones and the age guard apply)."""
        return self.call(ops.APPROVE, inputs_for(ops.APPROVE, (fact_id,), body, {}))

    def reject(self, fact_id: str, body: RejectDecision | Mapping[str, Any]) -> MemoryView:
        """Reject a pending fact, saying why; its value is tombstoned with the reason."""
        return self.call(ops.REJECT, inputs_for(ops.REJECT, (fact_id,), body, {}))

    def edit_and_approve(self, fact_id: str, body: EditAndApprove | Mapping[str, Any]) -> WriteResponse:
        """Replace a pending fact's text with the reviewer's, and approve it."""
        return self.call(ops.EDIT_AND_APPROVE, inputs_for(ops.EDIT_AND_APPROVE, (fact_id,), body, {}))

    def audit(self, *, after: int = 0, limit: int = 100) -> AuditPage:
        """The tenant's hash-chained audit log, in order (reviewer or admin keys)."""
        return self.call(ops.AUDIT, inputs_for(ops.AUDIT, (), None, {"after": after, "limit": limit}))

    def get_policy(self) -> TenantPolicy:
        """The tenant's policy: trust table, multi-valued kinds, what a tombstoned value does."""
        return self.call(ops.GET_POLICY, inputs_for(ops.GET_POLICY, (), None, {}))

    def put_policy(self, policy: TenantPolicy | Mapping[str, Any]) -> TenantPolicy:
        """Replace the tenant's policy (admin keys only; audited)."""
        return self.call(ops.PUT_POLICY, inputs_for(ops.PUT_POLICY, (), policy, {}))

    def recall(self, body: RecallRequest | Mapping[str, Any] | str) -> RecallResponse:
        """Ranked memories of the caller's scope and the formatted context block."""
        return self.call(ops.RECALL, inputs_for(ops.RECALL, (), body, {}))

    def create_key(self, body: KeyCreateRequest | Mapping[str, Any]) -> KeyCreated:
        """Create a key in the caller's tenant (admin keys only); the token is shown once."""
        return self.call(ops.CREATE_KEY, inputs_for(ops.CREATE_KEY, (), body, {}))

    def list_keys(self) -> KeyList:
        """Every key of the caller's tenant (admin keys only); secrets are never returned."""
        return self.call(ops.LIST_KEYS, inputs_for(ops.LIST_KEYS, (), None, {}))

    def revoke_key(self, key_id: str) -> None:
        """Revoke a key of the caller's tenant (admin keys only; not the tenant's last admin key)."""
        self.call(ops.REVOKE_KEY, inputs_for(ops.REVOKE_KEY, (key_id,), None, {}))
        return None

    def write_records(
        self,
        body: RecordWrite | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> RecordsWritten:
        """Write records (with nested children) under an UPPER_CASE label; mergeBy makes it an idempotent upsert."""
        return self.call(ops.WRITE_RECORDS, inputs_for(ops.WRITE_RECORDS, (), body, {"origin": origin}))

    def get_record(self, record_id: str, *, scope: ScopeFields | Mapping[str, Any] | None = None) -> RecordView:
        """One record of the caller's scope."""
        return self.call(ops.GET_RECORD, inputs_for(ops.GET_RECORD, (record_id,), None, {"scope": scope}))

    def update_record(self, record_id: str, body: RecordChange | Mapping[str, Any]) -> RecordView:
        """Set properties of a record (null removes one); the previous ones stay in its history."""
        return self.call(ops.UPDATE_RECORD, inputs_for(ops.UPDATE_RECORD, (record_id,), body, {}))

    def record_history(self, record_id: str, *, scope: ScopeFields | Mapping[str, Any] | None = None) -> RecordHistory:
        """Every version of a record's properties, oldest first."""
        return self.call(ops.RECORD_HISTORY, inputs_for(ops.RECORD_HISTORY, (record_id,), None, {"scope": scope}))

    def record_relationships(
        self,
        record_id: str,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
    ) -> RelationshipList:
        """The relationships of a record, both directions."""
        return self.call(ops.RECORD_RELATIONSHIPS, inputs_for(ops.RECORD_RELATIONSHIPS, (record_id,), None, {"scope": scope}))

    def delete_record(
        self,
        record_id: str,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
        cascade: bool = False,
    ) -> Deleted:
        """Delete a record (and, with cascade, what is nested under it); dryRun previews."""
        return self.call(ops.DELETE_RECORD, inputs_for(ops.DELETE_RECORD, (record_id,), None, {"scope": scope, "dry_run": dry_run, "cascade": cascade}))

    def search_records(self, body: RecordSearch | Mapping[str, Any]) -> RecordSearchResult:
        """Records matching a where (nested labels, operators, order, page), their aggregates, or by meaning."""
        return self.call(ops.SEARCH_RECORDS, inputs_for(ops.SEARCH_RECORDS, (), body, {}))

    def delete_records(self, body: DeleteRequest | Mapping[str, Any]) -> Deleted:
        """Delete the records a where matches; dryRun answers what would go."""
        return self.call(ops.DELETE_RECORDS, inputs_for(ops.DELETE_RECORDS, (), body, {}))

    def link_records(self, body: LinkRequest | Mapping[str, Any]) -> RelationshipView:
        """Create a typed, directed relationship between two records (or a record and a memory) of one scope."""
        return self.call(ops.LINK_RECORDS, inputs_for(ops.LINK_RECORDS, (), body, {}))

    def unlink_records(self, body: UnlinkRequest | Mapping[str, Any]) -> Unlinked:
        """Remove a relationship."""
        return self.call(ops.UNLINK_RECORDS, inputs_for(ops.UNLINK_RECORDS, (), body, {}))

    def records_schema(self, *, scope: ScopeFields | Mapping[str, Any] | None = None) -> KnowledgeSchema:
        """The scope's labels, their properties and kinds, and the relationships between labels."""
        return self.call(ops.RECORDS_SCHEMA, inputs_for(ops.RECORDS_SCHEMA, (), None, {"scope": scope}))

    def export_records(self, body: ExportRequest | Mapping[str, Any]) -> GraphExport:
        """A subgraph: the records a where matches, what they link to (depth hops), and the relationships."""
        return self.call(ops.EXPORT_RECORDS, inputs_for(ops.EXPORT_RECORDS, (), body, {}))


class AsyncMethods:
    """Every operation as a coroutine method (``AsyncClient``)."""

    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def health(self) -> Health:
        """Liveness, version, embedder and storage of the server."""
        return await self.call(ops.HEALTH, inputs_for(ops.HEALTH, (), None, {}))

    async def write_episode(self, body: EpisodeWrite | Mapping[str, Any]) -> WriteResponse:
        """Store an episode (201), or return the one already stored with this id (200)."""
        return await self.call(ops.WRITE_EPISODE, inputs_for(ops.WRITE_EPISODE, (), body, {}))

    async def write_episode_batch(
        self,
        bodies: EpisodeBatch | Mapping[str, Any] | list[dict[str, Any]],
    ) -> EpisodeBatchResult:
        """Store up to 100 episodes in one transaction; each item gets its own status and body."""
        return await self.call(ops.WRITE_EPISODE_BATCH, inputs_for(ops.WRITE_EPISODE_BATCH, (), bodies, {}))

    async def write_fact(
        self,
        body: FactWrite | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> WriteResponse:
        """Store a fact (201), or return the one already stored with this id (200)."""
        return await self.call(ops.WRITE_FACT, inputs_for(ops.WRITE_FACT, (), body, {"origin": origin}))

    async def get_episode(self, event_id: str, *, scope: ScopeFields | Mapping[str, Any] | None = None) -> MemoryView:
        """One episode of the caller's scope, with its embedding state."""
        return await self.call(ops.GET_EPISODE, inputs_for(ops.GET_EPISODE, (event_id,), None, {"scope": scope}))

    async def get_fact(self, fact_id: str, *, scope: ScopeFields | Mapping[str, Any] | None = None) -> MemoryView:
        """One fact of the caller's scope, with its lifecycle and embedding state."""
        return await self.call(ops.GET_FACT, inputs_for(ops.GET_FACT, (fact_id,), None, {"scope": scope}))

    async def list_episodes(
        self,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        session_id: str | None = None,
        after: str | None = None,
        before: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> EpisodeList:
        """A scope's episodes, newest first (observedAt, then write order), a page at a time."""
        return await self.call(ops.LIST_EPISODES, inputs_for(ops.LIST_EPISODES, (), None, {"scope": scope, "session_id": session_id, "after": after, "before": before, "cursor": cursor, "limit": limit}))

    async def list_facts(
        self,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        subject_key: str | None = None,
        kind: str | None = None,
        limit: int = 100,
        as_of: str | None = None,
        valid_at: str | None = None,
        include_history: bool = False,
    ) -> FactList:
        """Current facts of the caller's scope (or as of / valid at a time, or with history)."""
        return await self.call(ops.LIST_FACTS, inputs_for(ops.LIST_FACTS, (), None, {"scope": scope, "subject_key": subject_key, "kind": kind, "limit": limit, "as_of": as_of, "valid_at": valid_at, "include_history": include_history}))

    async def correct_fact(
        self,
        fact_id: str,
        body: CorrectRequest | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> WriteResponse:
        """Replace a current fact with a corrected one; the old value is tombstoned."""
        return await self.call(ops.CORRECT_FACT, inputs_for(ops.CORRECT_FACT, (fact_id,), body, {"origin": origin}))

    async def retract_fact(self, fact_id: str, body: RetractRequest | Mapping[str, Any]) -> MemoryView:
        """Retract a current fact that has no replacement; its value is tombstoned."""
        return await self.call(ops.RETRACT_FACT, inputs_for(ops.RETRACT_FACT, (fact_id,), body, {}))

    async def fact_history(self, fact_id: str, *, scope: ScopeFields | Mapping[str, Any] | None = None) -> FactHistory:
        """Every version of a fact, oldest first, with reasons and the slot's tombstones."""
        return await self.call(ops.FACT_HISTORY, inputs_for(ops.FACT_HISTORY, (fact_id,), None, {"scope": scope}))

    async def list_tombstones(
        self,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        subject_key: str | None = None,
        kind: str | None = None,
        include_lifted: bool = False,
    ) -> TombstoneList:
        """Values refused in the caller's scope."""
        return await self.call(ops.LIST_TOMBSTONES, inputs_for(ops.LIST_TOMBSTONES, (), None, {"scope": scope, "subject_key": subject_key, "kind": kind, "include_lifted": include_lifted}))

    async def lift_tombstone(self, tombstone_id: str, body: LiftRequest | Mapping[str, Any]) -> TombstoneView:
        """Let a tombstoned value become current again (reviewer or admin keys)."""
        return await self.call(ops.LIFT_TOMBSTONE, inputs_for(ops.LIFT_TOMBSTONE, (tombstone_id,), body, {}))

    async def review_queue(
        self,
        *,
        kind: str | None = None,
        subject_key: str | None = None,
        older_than_seconds: float | None = None,
        limit: int = 100,
    ) -> ReviewQueue:
        """Facts awaiting review in the tenant, oldest first (reviewer or admin keys)."""
        return await self.call(ops.REVIEW_QUEUE, inputs_for(ops.REVIEW_QUEUE, (), None, {"kind": kind, "subject_key": subject_key, "older_than_seconds": older_than_seconds, "limit": limit}))

    async def approve(self, fact_id: str, body: ReviewDecision | Mapping[str, Any] | None = None) -> WriteResponse:
        """Make a pending fact current (tombstones and the age guard apply)."""
        return await self.call(ops.APPROVE, inputs_for(ops.APPROVE, (fact_id,), body, {}))

    async def reject(self, fact_id: str, body: RejectDecision | Mapping[str, Any]) -> MemoryView:
        """Reject a pending fact, saying why; its value is tombstoned with the reason."""
        return await self.call(ops.REJECT, inputs_for(ops.REJECT, (fact_id,), body, {}))

    async def edit_and_approve(self, fact_id: str, body: EditAndApprove | Mapping[str, Any]) -> WriteResponse:
        """Replace a pending fact's text with the reviewer's, and approve it."""
        return await self.call(ops.EDIT_AND_APPROVE, inputs_for(ops.EDIT_AND_APPROVE, (fact_id,), body, {}))

    async def audit(self, *, after: int = 0, limit: int = 100) -> AuditPage:
        """The tenant's hash-chained audit log, in order (reviewer or admin keys)."""
        return await self.call(ops.AUDIT, inputs_for(ops.AUDIT, (), None, {"after": after, "limit": limit}))

    async def get_policy(self) -> TenantPolicy:
        """The tenant's policy: trust table, multi-valued kinds, what a tombstoned value does."""
        return await self.call(ops.GET_POLICY, inputs_for(ops.GET_POLICY, (), None, {}))

    async def put_policy(self, policy: TenantPolicy | Mapping[str, Any]) -> TenantPolicy:
        """Replace the tenant's policy (admin keys only; audited)."""
        return await self.call(ops.PUT_POLICY, inputs_for(ops.PUT_POLICY, (), policy, {}))

    async def recall(self, body: RecallRequest | Mapping[str, Any] | str) -> RecallResponse:
        """Ranked memories of the caller's scope and the formatted context block."""
        return await self.call(ops.RECALL, inputs_for(ops.RECALL, (), body, {}))

    async def create_key(self, body: KeyCreateRequest | Mapping[str, Any]) -> KeyCreated:
        """Create a key in the caller's tenant (admin keys only); the token is shown once."""
        return await self.call(ops.CREATE_KEY, inputs_for(ops.CREATE_KEY, (), body, {}))

    async def list_keys(self) -> KeyList:
        """Every key of the caller's tenant (admin keys only); secrets are never returned."""
        return await self.call(ops.LIST_KEYS, inputs_for(ops.LIST_KEYS, (), None, {}))

    async def revoke_key(self, key_id: str) -> None:
        """Revoke a key of the caller's tenant (admin keys only; not the tenant's last admin key)."""
        await self.call(ops.REVOKE_KEY, inputs_for(ops.REVOKE_KEY, (key_id,), None, {}))
        return None

    async def write_records(
        self,
        body: RecordWrite | Mapping[str, Any],
        *,
        origin: Literal["stated", "derived"] | None = None,
    ) -> RecordsWritten:
        """Write records (with nested children) under an UPPER_CASE label; mergeBy makes it an idempotent upsert."""
        return await self.call(ops.WRITE_RECORDS, inputs_for(ops.WRITE_RECORDS, (), body, {"origin": origin}))

    async def get_record(self, record_id: str, *, scope: ScopeFields | Mapping[str, Any] | None = None) -> RecordView:
        """One record of the caller's scope."""
        return await self.call(ops.GET_RECORD, inputs_for(ops.GET_RECORD, (record_id,), None, {"scope": scope}))

    async def update_record(self, record_id: str, body: RecordChange | Mapping[str, Any]) -> RecordView:
        """Set properties of a record (null removes one); the previous ones stay in its history."""
        return await self.call(ops.UPDATE_RECORD, inputs_for(ops.UPDATE_RECORD, (record_id,), body, {}))

    async def record_history(
        self,
        record_id: str,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
    ) -> RecordHistory:
        """Every version of a record's properties, oldest first."""
        return await self.call(ops.RECORD_HISTORY, inputs_for(ops.RECORD_HISTORY, (record_id,), None, {"scope": scope}))

    async def record_relationships(
        self,
        record_id: str,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
    ) -> RelationshipList:
        """The relationships of a record, both directions."""
        return await self.call(ops.RECORD_RELATIONSHIPS, inputs_for(ops.RECORD_RELATIONSHIPS, (record_id,), None, {"scope": scope}))

    async def delete_record(
        self,
        record_id: str,
        *,
        scope: ScopeFields | Mapping[str, Any] | None = None,
        dry_run: bool = False,
        cascade: bool = False,
    ) -> Deleted:
        """Delete a record (and, with cascade, what is nested under it); dryRun previews."""
        return await self.call(ops.DELETE_RECORD, inputs_for(ops.DELETE_RECORD, (record_id,), None, {"scope": scope, "dry_run": dry_run, "cascade": cascade}))

    async def search_records(self, body: RecordSearch | Mapping[str, Any]) -> RecordSearchResult:
        """Records matching a where (nested labels, operators, order, page), their aggregates, or by meaning."""
        return await self.call(ops.SEARCH_RECORDS, inputs_for(ops.SEARCH_RECORDS, (), body, {}))

    async def delete_records(self, body: DeleteRequest | Mapping[str, Any]) -> Deleted:
        """Delete the records a where matches; dryRun answers what would go."""
        return await self.call(ops.DELETE_RECORDS, inputs_for(ops.DELETE_RECORDS, (), body, {}))

    async def link_records(self, body: LinkRequest | Mapping[str, Any]) -> RelationshipView:
        """Create a typed, directed relationship between two records (or a record and a memory) of one scope."""
        return await self.call(ops.LINK_RECORDS, inputs_for(ops.LINK_RECORDS, (), body, {}))

    async def unlink_records(self, body: UnlinkRequest | Mapping[str, Any]) -> Unlinked:
        """Remove a relationship."""
        return await self.call(ops.UNLINK_RECORDS, inputs_for(ops.UNLINK_RECORDS, (), body, {}))

    async def records_schema(self, *, scope: ScopeFields | Mapping[str, Any] | None = None) -> KnowledgeSchema:
        """The scope's labels, their properties and kinds, and the relationships between labels."""
        return await self.call(ops.RECORDS_SCHEMA, inputs_for(ops.RECORDS_SCHEMA, (), None, {"scope": scope}))

    async def export_records(self, body: ExportRequest | Mapping[str, Any]) -> GraphExport:
        """A subgraph: the records a where matches, what they link to (depth hops), and the relationships."""
        return await self.call(ops.EXPORT_RECORDS, inputs_for(ops.EXPORT_RECORDS, (), body, {}))
