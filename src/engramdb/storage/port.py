"""The storage port: the only storage module that core imports (with the rows it names).

A ``Store`` holds tenants; a ``TenantStore`` one tenant's memories, keys and audit log. Every read
takes a ``scope_key`` (the digest of the five scope fields) and applies it, with the status filter,
before anything is scored. Backends differ in data (``Capabilities``), never in what core asks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

# Audit hashing lives in core (pure); re-exported for callers that still import it from here.
from engramdb.audit_chain import GENESIS_HASH, chain_hash
from engramdb.storage.aging import AgingRow, AgingStore
from engramdb.storage.assist.port import AssistReads, AssistWrites
from engramdb.storage.coverage import CoverageReads as CoverageReads  # re-exported: core reads through the port
from engramdb.storage.embedding_queue import EmbeddingQueue
from engramdb.storage.erasure import MemoryKey
from engramdb.storage.fact_search.port import FactSearchReads
from engramdb.storage.feed.port import FeedStores, WebhookWrites
from engramdb.storage.knowledge.port import KnowledgeReads, KnowledgeWrites
from engramdb.storage.participants import ParticipantSalts
from engramdb.storage.recall_port import RecallReads
from engramdb.storage.review_queue import ReviewReads
from engramdb.storage.rows import (
    BELIEVED_STATUSES,
    AuditDraft,
    AuditEntry,
    AuditFilter,
    Candidate,
    CandidateFilter,
    Capabilities,
    EmbedJob,
    EmbedState,
    Erasure,
    KeyRecord,
    ListPosition,
    MemoryRecord,
    NewMemory,
    ScopeColumns,
    ScopeOrder,
    ScopePage,
    ScopePosition,
    ScopeStats,
    Source,
    Tombstone,
    Vector,
    VersionLink,
)
from engramdb.storage.scope_listing import ScopeListing
from engramdb.storage.series import UsageSeriesStore
from engramdb.storage.tenant_names import check_tenant_name as check_tenant_name

__all__ = [
    "BELIEVED_STATUSES",
    "GENESIS_HASH",
    "AgingRow",
    "AgingStore",
    "AuditDraft",
    "AuditEntry",
    "AuditFilter",
    "Candidate",
    "CandidateFilter",
    "Capabilities",
    "EmbedJob",
    "EmbedState",
    "Erasure",
    "KeyRecord",
    "ListPosition",
    "MemoryKey",
    "MemoryRecord",
    "NewMemory",
    "ScopeColumns",
    "ScopeOrder",
    "ScopePage",
    "ScopePosition",
    "ScopeStats",
    "Source",
    "Store",
    "TenantStore",
    "Tombstone",
    "Transaction",
    "Vector",
    "chain_hash",
    "check_tenant_name",
]


class Transaction(KnowledgeWrites, AssistWrites, WebhookWrites, Protocol):
    """One atomic unit of work on a tenant: everything in it commits together or not at all."""

    def insert_memory(self, row: NewMemory) -> MemoryRecord | None:
        """Insert a row (and its lexical entry); return None if (scope, source, id) exists."""
        ...

    def get_memory(self, scope_key: str, source: Source, memory_id: str) -> MemoryRecord | None:
        """Return a row of this scope, as this transaction sees it."""
        ...

    def active_facts(self, scope_key: str, subject_key: str, kind: str) -> list[MemoryRecord]:
        """Return the active facts of one slot (scope, subject, kind)."""
        ...

    def history(self, scope_key: str, memory_id: str) -> list[MemoryRecord]:
        """Return the supersession chain a fact belongs to, as this transaction sees it."""
        ...

    def slot_facts(self, scope_key: str, subject_key: str, kind: str, statuses: Sequence[str]) -> list[MemoryRecord]:
        """Return the slot's facts in these statuses, in write order (locked for update)."""
        ...

    def retired_after(
        self, scope_key: str, subject_key: str, kind: str, *, valid_from: str | None, recorded_at: str, but: str
    ) -> list[MemoryRecord]:
        """The slot's superseded and expired versions that start after (validFrom, then recordedAt)
        this point, but the fact ``but``, in write order (locked for update)."""
        ...

    def covering(self, scope_key: str, subject_key: str, kind: str, *, start: str, but: int) -> list[MemoryRecord]:
        """The slot's superseded and expired versions whose valid window holds ``start`` (from at or
        before it, to after it), but the row ``but``, in write order (locked for update)."""
        ...

    def next_start(self, scope_key: str, subject_key: str, kind: str, *, after: str, but: int) -> str | None:
        """The earliest validFrom after ``after`` of the slot's versions that hold somewhere (active,
        superseded or expired, their window not empty), but the row ``but``."""
        ...

    def set_status(
        self,
        rowid: int,
        *,
        status: str,
        reason: str | None,
        retired_at: str | None = None,
        superseded_by: str | None = None,
        active_from: str | None = None,
        invalid_at: str | None = None,
        supersedes: str | None = None,
    ) -> MemoryRecord:
        """Change a row's lifecycle status and return it: ``superseded_by``, ``active_from`` and
        ``invalid_at`` replace the stored value when given; ``supersedes`` fills ``supersedes_id``
        only where the row has none."""
        ...

    def find_tombstone(self, scope_key: str, subject_key: str, kind: str, value_hash: str) -> Tombstone | None:
        """Return the unlifted tombstone of a value, if any."""
        ...

    def add_tombstone(self, tombstone: Tombstone) -> Tombstone:
        """Store a tombstone, or return the unlifted one that already holds this value."""
        ...

    def get_tombstone(self, tombstone_id: str) -> Tombstone | None: ...

    def lift_tombstone(self, tombstone_id: str, *, at: str, by: str | None, reason: str) -> bool:
        """Lift an unlifted tombstone; return False if there was none."""
        ...

    def participant_scopes(self, participant_hash: str) -> list[str]:
        """Return the scope keys holding memories or records of this participant."""
        ...

    def erase_scopes(self, scope_keys: Sequence[str]) -> Erasure:
        """Delete every row of these scopes (memories, tombstones, records and all beside them) and
        erase the reasons of audit entries about them; return what went."""
        ...

    def delete_memory_rows(self, scope_key: str, rows: Sequence[MemoryKey]) -> int:
        """Delete these memories of one scope, their relationships and their audit reasons."""
        ...

    def set_marks(self, rowid: int, *, pinned: bool | None, importance: float | None) -> None:
        """Pin or unpin a row and set its importance (None leaves a mark as it is)."""
        ...

    def marks(self, rowid: int) -> tuple[bool, float | None]:
        """Return a row's pin and importance."""
        ...

    def touch(self, rowid: int, at: str) -> None:
        """Count a row as used at ``at``."""
        ...

    def audit(self, draft: AuditDraft) -> AuditEntry:
        """Append a chained audit entry."""
        ...

    def audit_many(self, drafts: Sequence[AuditDraft]) -> list[AuditEntry]:
        """Append chained audit entries, in order, in one go (all at one record time)."""
        ...


class TenantStore(
    RecallReads,
    KnowledgeReads,
    AssistReads,
    ParticipantSalts,
    FeedStores,
    FactSearchReads,
    ScopeListing,
    ReviewReads,
    EmbeddingQueue,
    Protocol,
):
    """One tenant's memories, keys and audit log."""

    capabilities: Capabilities
    aging: AgingStore  # what a sweep weighs, retention ends, and recall's batched use counts
    usage: UsageSeriesStore  # usage over time: hourly counters and gauges, the model ledger by hour
    coverage: CoverageReads  # the rows the audit covers, in pages, and the entries about them (audit verify)

    def transaction(self) -> AbstractContextManager[Transaction]:
        """Return a write transaction (serialised with every other writer of the tenant)."""
        ...

    def reading(self) -> AbstractContextManager[TenantStore]:
        """Return this store for a block of reads that may share one connection (a recall)."""
        ...

    def facts_by_id(self, fact_id: str, statuses: Sequence[str]) -> list[MemoryRecord]:
        """Return the facts with this id in any scope of the tenant (ids can repeat across scopes)."""
        ...

    def memories_by_id(self, memory_id: str) -> list[tuple[MemoryRecord, ScopeColumns]]:
        """Return the episodes and facts with this id in any scope of the tenant, with their scopes."""
        ...

    def history(self, scope_key: str, memory_id: str) -> list[MemoryRecord]:
        """Return the supersession chain a fact belongs to (every linked version)."""
        ...

    def history_links(self, scope_key: str, memory_id: str) -> list[VersionLink]:
        """The links of every version of that chain, oldest first: what a page of it is cut from."""
        ...

    def versions(self, scope_key: str, links: Sequence[VersionLink]) -> list[MemoryRecord]:
        """The rows of ``links`` (versions of a history of ``scope_key``), in their order; one gone since is
        left out."""
        ...

    def tombstones(
        self, scope_key: str, *, subject_key: str | None, kind: str | None, include_lifted: bool
    ) -> list[Tombstone]:
        """Return the tombstones of a scope."""
        ...

    def expire_due(self, now: str, actor: AuditDraft) -> int:
        """Mark active rows whose validUntil has passed as expired (audited); return how many."""
        ...

    def get_policy(self) -> str | None:
        """Return the tenant's policy document (JSON), or None for the defaults."""
        ...

    def set_policy(self, policy_json: str, audit: AuditDraft) -> None:
        """Store the tenant's policy document (audited)."""
        ...

    def get_memory(self, scope_key: str, source: Source, memory_id: str) -> MemoryRecord | None:
        """Return the row with this id in this scope, or None."""
        ...

    def list_facts(
        self,
        scope_key: str,
        *,
        subject_key: str | None,
        kind: str | None,
        filt: CandidateFilter,
        below: ListPosition | None,
        limit: int,
    ) -> list[MemoryRecord]:
        """Return facts of the scope that pass ``filt``, newest first (``recordedAt``, then write
        order), after ``below`` when given (keyset paging)."""
        ...

    def list_episodes(
        self,
        scope_key: str,
        *,
        session_id: str | None,
        after: str | None,
        before: str | None,
        below: ListPosition | None,
        limit: int,
    ) -> list[MemoryRecord]:
        """Return the scope's active episodes, newest first (``observedAt``, then write order).

        ``after`` (inclusive) and ``before`` (exclusive) bound ``observedAt`` (canonical text);
        ``below`` starts after a position a previous page ended on (cursor paging).
        """
        ...

    def count_episodes(self, scope_key: str, *, session_id: str | None, after: str | None, before: str | None) -> int:
        """Return how many episodes ``list_episodes`` would list with these filters, every page together."""
        ...

    def records(self, rowids: Sequence[int], *, with_event: bool = True) -> dict[int, MemoryRecord]:
        """Return rows by rowid (the caller already scoped the rowids); ``with_event=False``
        leaves ``event_json`` empty, for recall, which never shows it."""
        ...

    def create_key(self, key: KeyRecord, audit: AuditDraft) -> None:
        """Store a new key (hashed) and audit it."""
        ...

    def get_key(self, key_id: str) -> KeyRecord | None:
        """Return a key by id (revoked keys included)."""
        ...

    def list_keys(self) -> list[KeyRecord]:
        """Return every key of the tenant."""
        ...

    def revoke_key(self, key_id: str, at: str, audit: AuditDraft, *, keep_an_admin: bool = False) -> bool:
        """Revoke a key; return False if it was unknown or already revoked, or (``keep_an_admin``) if it
        is the tenant's last active admin key, as the revoke's own write sees the keys."""
        ...

    def audit_entries(self, after_seq: int, limit: int, filt: AuditFilter | None = None) -> list[AuditEntry]:
        """Return audit entries in order, after ``after_seq`` (those ``filt`` keeps, if given)."""
        ...

    def export_rows(self, scope_keys: Sequence[str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Yield ``(table, row)`` for every memory, tombstone, key and audit entry, in order; with
        ``scope_keys``, only the rows of those scopes (no key, audit entry or tenant setting)."""
        ...

    def import_rows(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Load exported rows into this (empty) tenant verbatim; return counts per table."""
        ...

    def participant_scopes(self, participant_hash: str) -> list[str]:
        """Return the scope keys holding memories or records of this participant."""
        ...

    def erasure_preview(self, scope_keys: Sequence[str]) -> Erasure:
        """Return what ``erase_scopes`` would take, taking nothing."""
        ...

    def scrub(self) -> None:
        """Make what an erasure deleted leave the storage files (not only the tables)."""
        ...

    def bulk_load(self, rows: Sequence[NewMemory], vectors: Vector, model: str, audits: Sequence[AuditDraft]) -> int:
        """Insert new rows already embedded, each with its audit entry, in one transaction; return
        how many were new. For benchmarks: the write path embeds after the write returns."""
        ...

    def close(self) -> None:
        """Release connections and caches."""
        ...


class Store(Protocol):
    """All tenants of one deployment."""

    def tenant(self, name: str, *, create: bool = False) -> TenantStore:
        """Return the tenant's store; raise NotFoundError unless it exists or ``create``."""
        ...

    def tenant_names(self) -> list[str]:
        """Return the names of existing tenants."""
        ...

    def maintain(self) -> None:
        """Tidy the storage after a bulk load (statistics, dead rows); safe while serving."""
        ...

    def backup(self, dest: Path, *, pg_bin: str | None = None) -> None:
        """Write a consistent copy of every tenant into the folder ``dest``; safe while serving."""
        ...

    def warm(self, stop: Callable[[], bool] = lambda: False, vector_model: str | None = None) -> list[tuple[str, str]]:
        """Load the scopes recall used most recently (as many as the memory limit holds), with the
        vectors of ``vector_model`` (the server's embedder), before a server reports ready; return
        them as (tenant, scope key), most recent first. ``stop()`` ends it early."""
        ...

    def freshen(self, stop: Callable[[], bool] = lambda: False) -> int:
        """Take committed writes into the most recently used scope copies now (a server does between
        recalls, so the next recall need not); return how many took rows in. ``stop()`` ends it."""
        ...

    def close(self) -> None:
        """Close every tenant."""
        ...
