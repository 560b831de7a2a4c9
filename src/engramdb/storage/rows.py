"""The rows the storage port passes: as written and as stored, filters, keys, audit entries.

Plain frozen dataclasses, no behaviour; ``storage/columns.py`` keeps each one's column order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

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
class ScopeStats:
    """A scope that holds memories, and how many of each kind."""

    scope: ScopeColumns
    episodes: int
    facts: int
    pending: int  # facts awaiting review
    last_recorded_at: str  # when a memory was last stored in it


ScopeOrder = Literal["recent", "key"]  # most recently written first, or by key


@dataclass(frozen=True)
class ScopePosition:
    """Where a scope sits in a listing: its last write (``recent``), and its key."""

    at: str
    scope_key: str


@dataclass(frozen=True)
class ScopePage:
    """A page of scopes, and where the next starts (None: the last page)."""

    scopes: list[ScopeStats]
    following: ScopePosition | None


@dataclass(frozen=True)
class AuditFilter:
    """Which audit entries a listing keeps (None: any)."""

    action_prefix: str | None = None
    target_id: str | None = None
    actor_key_id: str | None = None


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
    source_event_id: str | None = None  # the turn it came from: a fact's episode, an episode's host turn id


class VersionLink(NamedTuple):
    """What a fact's history needs of a version to find and order it: its ids, links, slot and times."""

    rowid: int
    memory_id: str
    supersedes_id: str | None
    superseded_by_id: str | None
    subject_key: str | None
    kind: str | None
    valid_from: str | None
    recorded_at: str


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
    embed_model: str | None = None  # the model its vector came from (another model's vector is stale)
    pinned: int | None = None  # a person's marks (NULL reads as not pinned), which an audit digest covers
    importance: float | None = None


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
    vector_model: str | None = None  # the vector arm compares only vectors of this model (None: any)


@dataclass(frozen=True)
class ListPosition:
    """Where a row sits in a newest-first listing: its time (an episode's ``observedAt``, a fact's
    ``recordedAt``), then its rowid."""

    at: str
    rowid: int


class Candidate(NamedTuple):
    """One arm's hit: a row and its raw score (higher is better). A tuple: an arm returns a few
    hundred, and fusion reads them as ``(rowid, score)`` pairs."""

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
    reason_digest: str | None = None  # what the chain covers of the reason (None: the text itself)
    reason_nonce: str | None = None  # salts the digest; erased with the reason


@dataclass(frozen=True)
class Erasure:
    """What an erasure took (or, previewed, would take)."""

    scopes: int = 0
    memories: int = 0
    records: int = 0
    relationships: int = 0
    tombstones: int = 0
    audit_reasons_erased: int = 0
    audit_reasons_kept: int = 0  # written before reasons had digests: erasing them would break the chain


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


@dataclass(frozen=True)
class EdgeRow:
    """A stored relationship as the audit covers it: the id its entries name it by
    (``source-TYPE->target``, by public ids), its state by field class, whether both ends are nodes
    of its scope, and whether it is a DERIVED_FROM link its fact's and episode's events make."""

    rowid: int
    scope_key: str
    target_id: str
    state: dict[str, dict[str, Any]]
    ends_held: bool
    implied: bool


@dataclass(frozen=True)
class HourValue:
    """One value of one series in one hour (``hour``: ``YYYY-MM-DDTHH``, UTC)."""

    hour: str
    metric: str
    dimension: str
    value: float
