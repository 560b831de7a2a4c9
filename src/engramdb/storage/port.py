"""The storage port: the only storage module that core imports.

A ``Store`` holds tenants; a ``TenantStore`` holds one tenant's memories, keys and audit log.
Every read takes a ``scope_key`` (the digest of the five scope fields) and applies it, with the
status filter, before anything is scored. Backends differ in data (``Capabilities``), never in
what core has to ask.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from engramdb.core.audit import GENESIS_HASH, chain_hash
from engramdb.errors import InvalidInputError

_TENANT_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


def check_tenant_name(name: str) -> str:
    """Return ``name`` if it is a valid tenant name, else raise InvalidInputError."""
    if not _TENANT_NAME.fullmatch(name):
        raise InvalidInputError(
            "tenant names are 1-63 characters of a-z, 0-9 and '-', starting with a letter or digit",
            field="tenant",
        )
    return name


Source = Literal["EPISODE", "MEMORY_FACT"]
EmbedState = Literal["pending", "ready", "failed"]
Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do natively."""

    native_vector_index: bool = False
    lexical_ranking: str = "bm25"


@dataclass(frozen=True)
class ScopeColumns:
    """The five scope fields as stored, plus their digest."""

    scope_key: str
    agent_id: str
    profile_id: str
    privacy_scope: str
    participant_scope_hash: str
    sandbox_eligible: bool


@dataclass(frozen=True)
class NewMemory:
    """A memory about to be written (an episode or a fact)."""

    source: Source
    memory_id: str
    scope: ScopeColumns
    text: str  # what recall shows and what the lexical arm indexes
    embed_text: str  # what the vector arm embeds
    trust_class: str
    origin: str
    status: str
    confidence: float
    observed_at: str
    recorded_at: str
    event_json: str
    session_id: str | None = None
    subject_key: str | None = None
    kind: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    supersedes_id: str | None = None
    active_from: str | None = None  # record time it became believed; None while not believed
    status_reason: str | None = None  # why it has its status (e.g. why it waits for review)


@dataclass(frozen=True)
class MemoryRecord:
    """A stored memory with its lifecycle and embedding state."""

    rowid: int
    source: Source
    memory_id: str
    scope_key: str
    text: str
    trust_class: str
    origin: str
    status: str
    confidence: float
    observed_at: str
    recorded_at: str
    event_json: str
    embed_state: EmbedState
    embed_error: str | None
    embed_attempts: int
    session_id: str | None = None
    subject_key: str | None = None
    kind: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    retired_at: str | None = None
    supersedes_id: str | None = None
    superseded_by_id: str | None = None
    status_reason: str | None = None
    active_from: str | None = None
    # Valid time from which a successor holds (its validFrom), set when the successor is
    # recorded; validUntil stays as the claim was written.
    invalid_at: str | None = None


# Statuses of memories that were believed at some time (pending and rejected never were).
BELIEVED_STATUSES = ("active", "superseded", "retracted", "expired", "archived")


@dataclass(frozen=True)
class CandidateFilter:
    """Filters both recall arms apply before scoring (beyond tenant and scope).

    ``statuses`` None means any status. ``as_of`` keeps memories believed at that record time
    (active from on or before it, not retired by it); ``believed_by`` keeps memories believed at
    some time up to it (history as it stood then); ``valid_at`` keeps memories whose valid
    window holds that instant (``validFrom`` to the earlier of ``validUntil`` and
    ``invalid_at``; without ``as_of``, and with ``believed_by`` only where the row was retired
    by then); ``expires_after`` keeps memories whose ``validUntil`` is later.
    """

    statuses: tuple[str, ...] | None = ("active",)
    exclude_session_id: str | None = None
    sources: tuple[Source, ...] = ("EPISODE", "MEMORY_FACT")
    as_of: str | None = None
    believed_by: str | None = None  # active (or retired as history) on or before it, retired or not
    valid_at: str | None = None
    expires_after: str | None = None


@dataclass(frozen=True)
class EpisodePosition:
    """Where an episode sits in a newest-first listing: its ``observedAt``, then its rowid."""

    observed_at: str
    rowid: int


@dataclass(frozen=True)
class Candidate:
    """One arm's hit: a row and its raw score (higher is better)."""

    rowid: int
    score: float


@dataclass(frozen=True)
class EmbedJob:
    """A row whose vector is pending or due for a retry."""

    rowid: int
    text: str
    attempts: int


@dataclass(frozen=True)
class AuditDraft:
    """An audit entry before the store gives it a sequence number and chains it."""

    action: str
    actor_key_id: str | None
    actor_role: str | None
    target_kind: str | None = None
    target_id: str | None = None
    scope_key: str | None = None
    before_digest: str | None = None
    after_digest: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class AuditEntry:
    """A stored, chained audit entry."""

    seq: int
    at: str
    action: str
    actor_key_id: str | None
    actor_role: str | None
    target_kind: str | None
    target_id: str | None
    scope_key: str | None
    before_digest: str | None
    after_digest: str | None
    reason: str | None
    prev_hash: str
    hash: str


@dataclass(frozen=True)
class KeyRecord:
    """An API key as stored: the secret only as a hash."""

    key_id: str
    role: str
    grant_json: str
    secret_hash: str
    created_at: str
    label: str | None = None
    revoked_at: str | None = None


@dataclass(frozen=True)
class Tombstone:
    """A value refused for a slot (scope, subject, kind): re-asserting it cannot make it current."""

    tombstone_id: str
    scope_key: str
    subject_key: str
    kind: str
    value_hash: str
    fact_id: str | None
    reason: str | None
    created_at: str
    actor_key_id: str | None = None
    lifted_at: str | None = None
    lifted_by: str | None = None
    lift_reason: str | None = None


class Transaction(Protocol):
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

    def slot_facts(
        self, scope_key: str, subject_key: str, kind: str, statuses: Sequence[str]
    ) -> list[MemoryRecord]:
        """Return the slot's facts in these statuses, in write order (locked for update)."""
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
        """Change a row's lifecycle status and return it.

        ``superseded_by``, ``active_from`` and ``invalid_at`` replace the stored value when given;
        ``supersedes`` fills ``supersedes_id`` only where the row has none.
        """
        ...

    def find_tombstone(
        self, scope_key: str, subject_key: str, kind: str, value_hash: str
    ) -> Tombstone | None:
        """Return the unlifted tombstone of a value, if any."""
        ...

    def add_tombstone(self, tombstone: Tombstone) -> Tombstone:
        """Store a tombstone, or return the unlifted one that already holds this value."""
        ...

    def get_tombstone(self, tombstone_id: str) -> Tombstone | None:
        ...

    def lift_tombstone(self, tombstone_id: str, *, at: str, by: str | None, reason: str) -> bool:
        """Lift an unlifted tombstone; return False if there was none."""
        ...

    def audit(self, draft: AuditDraft) -> AuditEntry:
        """Append a chained audit entry."""
        ...


class TenantStore(Protocol):
    """One tenant's memories, keys and audit log."""

    capabilities: Capabilities

    def transaction(self) -> AbstractContextManager[Transaction]:
        """Return a write transaction (serialised with every other writer of the tenant)."""
        ...

    def reading(self) -> AbstractContextManager[TenantStore]:
        """Return this store for a block of reads that may share one connection (a recall)."""
        ...

    def facts_by_id(self, fact_id: str, statuses: Sequence[str]) -> list[MemoryRecord]:
        """Return the facts with this id in any scope of the tenant (ids can repeat across scopes)."""
        ...

    def review_queue(
        self, *, kind: str | None, subject_key: str | None, recorded_before: str | None, limit: int
    ) -> list[tuple[MemoryRecord, ScopeColumns]]:
        """Return pending_review facts of the whole tenant, oldest first, with their scopes."""
        ...

    def history(self, scope_key: str, memory_id: str) -> list[MemoryRecord]:
        """Return the supersession chain a fact belongs to (every linked version)."""
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
        limit: int,
    ) -> list[MemoryRecord]:
        """Return facts of the scope that pass ``filt``, newest first."""
        ...

    def list_episodes(
        self,
        scope_key: str,
        *,
        session_id: str | None,
        after: str | None,
        before: str | None,
        below: EpisodePosition | None,
        limit: int,
    ) -> list[MemoryRecord]:
        """Return the scope's active episodes, newest first (``observedAt``, then write order).

        ``after`` (inclusive) and ``before`` (exclusive) bound ``observedAt`` (canonical text);
        ``below`` starts after a position a previous page ended on (cursor paging).
        """
        ...

    def records(self, rowids: Sequence[int], *, with_event: bool = True) -> dict[int, MemoryRecord]:
        """Return rows by rowid (the caller already scoped the rowids); ``with_event=False``
        leaves ``event_json`` empty, for recall, which never shows it."""
        ...

    def text_candidates(
        self, scope_key: str, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> list[Candidate]:
        """Return the lexical arm's top rows (BM25, higher is better) within the scope."""
        ...

    def adjacent(self, scope_key: str, rowids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Return, aligned with ``rowids``, the rowids of the episodes written just before and
        after each one in its session, in this scope (-1: none; also for -1 and for facts)."""
        ...

    def vector_candidates(
        self, scope_key: str, query: Vector, filt: CandidateFilter, limit: int
    ) -> list[Candidate]:
        """Return the exact cosine top rows within the scope (ready vectors only)."""
        ...

    def candidates(
        self, scope_key: str, query: Vector, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> tuple[list[Candidate], list[Candidate]]:
        """Return both arms' top rows, as ``vector_candidates`` and ``text_candidates`` would
        (a store may read the scope once for both)."""
        ...

    def term_counts(self, scope_key: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """Return the scope's row count and how many of its rows contain each term (may be cached)."""
        ...

    def embedding_jobs(self, limit: int, now: str) -> list[EmbedJob]:
        """Return rows whose vector is pending, or failed and due for a retry."""
        ...

    def save_embeddings(self, rowids: Sequence[int], vectors: Vector, model: str) -> None:
        """Store vectors beside their rows and mark them ready."""
        ...

    def record_embedding_failure(
        self, rowids: Sequence[int], error: str, next_attempt_at: Sequence[str]
    ) -> None:
        """Mark rows failed with the error and when to retry."""
        ...

    def embedding_counts(self) -> dict[str, int]:
        """Return how many rows are pending, ready and failed."""
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

    def revoke_key(self, key_id: str, at: str, audit: AuditDraft) -> bool:
        """Revoke a key; return False if it was unknown or already revoked."""
        ...

    def audit_entries(self, after_seq: int, limit: int) -> list[AuditEntry]:
        """Return audit entries in order, after ``after_seq``."""
        ...

    def export_rows(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Yield ``(table, row)`` for every memory, tombstone, key and audit entry, in order."""
        ...

    def import_rows(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        """Load exported rows into this (empty) tenant verbatim; return counts per table."""
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

    def close(self) -> None:
        """Close every tenant."""
        ...

