"""Keys, the audit log and the server's health."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from engramdb.contract.events import ScopeFields, WireModel
from engramdb.models.base import QueryModel, ResponseModel

Role = Literal["agent", "host", "reviewer", "admin"]


class KeyCreateRequest(WireModel):
    """Body of ``POST /v1/keys`` (admin keys only)."""

    role: Role = Field(
        description="agent (one scope), host (its users' scopes), reviewer (reads and review decisions) or admin"
    )
    grant: ScopeFields = Field(
        default_factory=ScopeFields,
        description="the scope fields the key is bound to: all five for agent, at least agentId and profileId for host",
    )
    label: str | None = Field(None, max_length=200, description="a note for people (who or what uses the key)")


class KeyView(ResponseModel):
    """A key as listed: never its secret."""

    key_id: str = Field(description="the key's id (the third part of the token)")
    role: str = Field(description="agent, host, reviewer or admin")
    grant: dict[str, str | bool] = Field(description="the scope fields the key is bound to")
    label: str | None = Field(None, description="a note for people")
    created_at: str = Field(description="when it was created")
    revoked_at: str | None = Field(None, description="when it was revoked (it no longer authenticates)")


class KeyCreated(KeyView):
    """A new key, with its token."""

    key: str = Field(description="the bearer token; shown once, stored only as a hash")


class KeyList(ResponseModel):
    """Every key of a tenant."""

    keys: list[KeyView] = Field(description="the keys, revoked ones included")


class Health(ResponseModel):
    """The server is up, and what it runs on."""

    status: Literal["ok"] = Field(description="always ok when the server answers")
    version: str = Field(description="EngramDB's version")
    embedder: str = Field(description="the embedding model's id")
    storage: str = Field(description="the storage backend: sqlite or postgresql")
    reembed_backlog: int = Field(
        0,
        description="memories whose vector another model made: found by words only "
        "until `engram reembed` (counted at most every 30 s)",
    )


class AuditView(ResponseModel):
    """One entry of the hash-chained audit log."""

    seq: int = Field(description="its place in the chain, from 1")
    at: str = Field(description="when it was appended")
    action: str = Field(description="what happened, e.g. fact.supersede, review.approve, key.create")
    actor_key_id: str | None = Field(None, description="the key that did it (absent for the operator or the system)")
    actor_role: str | None = Field(None, description="that key's role, or operator or system")
    target_kind: str | None = Field(
        None, description="what it acted on: EPISODE, MEMORY_FACT, tombstone, api_key, policy"
    )
    target_id: str | None = Field(None, description="the id of what it acted on")
    scope_key: str | None = Field(None, description="digest of the scope it acted in")
    before_digest: str | None = Field(None, description="digest of the target's state before")
    after_digest: str | None = Field(None, description="digest of the target's state after")
    reason: str | None = Field(None, description="why, as given")
    prev_hash: str = Field(description="the previous entry's hash")
    hash: str = Field(description="this entry's hash, over its fields and prevHash")


class AuditPage(ResponseModel):
    """A page of the audit log, in order."""

    entries: list[AuditView] = Field(description="the entries, in chain order")
    next_after: int | None = Field(None, description="pass as ?after= for the next page; absent on the last")


class AuditQuery(QueryModel):
    """Which page of the audit log, and which entries of it."""

    after: int = Field(0, ge=0, le=2**53 - 1, description="start after this sequence number")
    limit: int = Field(100, ge=1, le=1000, description="at most this many entries (1-1000)")
    action: str | None = Field(
        None, min_length=1, max_length=64, description="only actions starting with this (fact. for every fact action)"
    )
    target_id: str | None = Field(None, min_length=1, max_length=256, description="only entries about this id")
    actor_key_id: str | None = Field(None, min_length=1, max_length=64, description="only entries by this key")


class AuditVerdict(ResponseModel):
    """Whether the tenant's audit chain holds, and where it breaks first."""

    tenant: str = Field(description="the tenant whose chain was recomputed")
    verified: bool = Field(description="true when every entry matches its hash and links to the one before")
    checked: int = Field(description="entries verified (before the first broken one, if any)")
    broken_seq: int | None = Field(
        None,
        description="the first entry that was edited, removed or re-hashed, or that its anchor outside "
        "the database no longer finds (truncated, renumbered, rewritten)",
    )
    memories_checked: int | None = Field(
        None, description="stored memories checked against their events and audit entries (once the chain holds)"
    )
    rows_checked: int | None = Field(
        None,
        description="stored rows that decide what a read returns or who may read it (memories, records, "
        "relationships, keys, the policy) checked against the last audit entry about each (once the chain holds)",
    )
    memory_id: str | None = Field(None, description="the first stored memory that is not what was written")
    row_kind: str | None = Field(
        None,
        description="the kind of the first row that is not what the audit says (EPISODE, MEMORY_FACT, RECORD, "
        "RELATIONSHIP, api_key, policy, tenant)",
    )
    row_id: str | None = Field(None, description="that row's id (a relationship's: source-TYPE->target)")
    fields: list[str] = Field(
        default_factory=list,
        description="which of that row's field classes differ from what its last audit entry recorded "
        "(e.g. lifecycle, trust, scope, content, marks; properties, label; role, grant, secret, revocation)",
    )
    problem: str | None = Field(None, description="what is wrong with that entry, memory or row")
    anchored: bool | None = Field(
        None,
        description="whether an anchor outside the database held the chain (false: none was found, so the "
        "verdict rests on the database alone; null: an empty chain, nothing to anchor)",
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="what did not fail verification but weakens it (no anchor file; a torn anchor line, ignored)",
    )
