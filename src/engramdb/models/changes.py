"""The change feed: what changed in the scopes a key may read, in order, from a durable cursor.

A change names what changed (its kind, its target and id, its scope, when and by what role),
never its text: the text of something erased since is gone, and the feed never held it.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, field_validator

from engramdb.models.base import QueryModel, ResponseModel

ChangeKind = Literal[
    "created",
    "updated",
    "superseded",
    "retracted",
    "archived",
    "restored",
    "expired",
    "deleted",
    "forgotten",
    "reviewed",
    "marked",
]
CHANGE_KINDS: tuple[str, ...] = get_args(ChangeKind)
ChangeTarget = Literal["episode", "fact", "record", "relationship", "scope"]


def parse_kinds(text: str | None) -> tuple[str, ...]:
    """Return the kinds a comma-separated list names (empty: every kind); ValueError names an unknown one."""
    kinds = tuple(dict.fromkeys(k.strip() for k in (text or "").split(",") if k.strip()))
    unknown = [k for k in kinds if k not in CHANGE_KINDS]
    if unknown:
        raise ValueError(f"unknown change kind {unknown[0]!r}: one of {', '.join(CHANGE_KINDS)}")
    return kinds


class ChangeQuery(QueryModel):
    """Where to read the feed from, and which kinds of change."""

    after: int = Field(0, ge=0, le=2**53 - 1, description="the cursor: changes after this sequence number")
    limit: int = Field(100, ge=1, le=1000, description="at most this many changes (1-1000)")
    kinds: str | None = Field(
        None,
        max_length=200,
        description="only these kinds, comma-separated: " + ", ".join(CHANGE_KINDS) + " (default: every kind)",
    )

    @field_validator("kinds")
    @classmethod
    def _known(cls, value: str | None) -> str | None:
        parse_kinds(value)
        return value


class ChangeScope(ResponseModel):
    """The five fields of the scope a change happened in."""

    agent_id: str = Field(description="agentId")
    profile_id: str = Field(description="profileId")
    privacy_scope: str = Field(description="private or shared")
    participant_scope_hash: str = Field(description="the participant's hash")
    sandbox_eligible: bool = Field(description="sandboxEligible")


class Change(ResponseModel):
    """One change: what happened to what, where and when; never the text of what changed."""

    seq: int = Field(description="its place in the tenant's feed (the audit log's sequence number)")
    kind: ChangeKind = Field(description="what happened: " + ", ".join(CHANGE_KINDS))
    target: ChangeTarget = Field(description="what it happened to: episode, fact, record, relationship or scope")
    id: str | None = Field(None, description="the id of what changed (a relationship: source-TYPE->target)")
    action: str = Field(description="the audit log's action, e.g. fact.supersede or review.reject")
    at: str = Field(description="when it happened")
    scope_key: str | None = Field(None, description="digest of the scope it happened in")
    scope: ChangeScope | None = Field(None, description="that scope's five fields (absent when unknown)")
    actor_role: str | None = Field(None, description="the role of the key that did it, or operator or system")


class ChangePage(ResponseModel):
    """A page of the feed, and the cursor to read on from."""

    changes: list[Change] = Field(description="the changes, in order")
    next_after: int = Field(
        description="pass as ?after= to read on: everything up to it that the key may see was listed"
    )
    head: int = Field(description="the feed's last sequence number when this page was read")
    more: bool = Field(description="true when there may be more changes to read now (nextAfter < head)")
