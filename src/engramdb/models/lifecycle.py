"""Beliefs that change: corrections, retractions, tombstones, history and the review queue."""

from __future__ import annotations

from pydantic import Field, field_validator

from engramdb.contract.events import KeptDateTime, ScopeFields, WireModel
from engramdb.errors import InvalidInputError
from engramdb.models.base import QueryModel, ResponseModel, ScopeQuery, ScopeView
from engramdb.models.memories import MemoryQuery, MemoryView

_SCOPE = "scope fields the key does not fix (to name the scope of the fact)"


class CorrectRequest(WireModel):
    """Body of ``POST /v1/facts/{factId}/correct``: the new value and why."""

    text: str = Field(min_length=1, max_length=4_000, description="the corrected claim, one self-contained sentence")
    reason: str = Field(min_length=1, max_length=1_000, description="why the old value is wrong (kept in the history)")
    scope: ScopeFields | None = Field(None, description=_SCOPE)
    valid_from: KeptDateTime | None = Field(
        None, description="valid time the corrected value holds from (default: the corrected fact's validFrom)"
    )
    confidence: float | None = Field(None, ge=0, le=1, description="default: the corrected fact's confidence")
    source_event_id: str | None = Field(
        None,
        min_length=1,
        max_length=256,
        description="the turn the correction came from (default correction:<factId>)",
    )
    provenance: str | None = Field(
        None, min_length=1, max_length=512, description="who corrects it (default: the corrected fact's provenance)"
    )


class RetractRequest(WireModel):
    """Body of ``POST /v1/facts/{factId}/retract``."""

    reason: str = Field(min_length=1, max_length=1_000, description="why the fact no longer holds")
    scope: ScopeFields | None = Field(None, description=_SCOPE)


class LiftRequest(WireModel):
    """Body of ``POST /v1/tombstones/{tombstoneId}/lift``."""

    reason: str = Field(min_length=1, max_length=1_000, description="why the value may be current again")


class TombstoneView(ResponseModel):
    """A value refused for a slot (scope, subject, kind)."""

    tombstone_id: str = Field(description="the tombstone's id")
    subject_key: str = Field(description="the slot's subject")
    kind: str = Field(description="the slot's kind")
    value_hash: str = Field(description="SHA-256 of the refused value after normalisation (NFKC, case, spaces)")
    fact_id: str | None = Field(None, description="the fact whose value it refuses")
    reason: str | None = Field(None, description="why the value was retired")
    created_at: str = Field(description="when it was tombstoned")
    lifted_at: str | None = Field(None, description="when a reviewer lifted it (the value may be current again)")
    lift_reason: str | None = Field(None, description="why it was lifted")


class FactHistoryQuery(MemoryQuery):
    """Which page of a fact's versions to read, and in which order."""

    cursor: str | None = Field(None, max_length=200, description="nextCursor of the previous page")
    limit: int = Field(100, ge=1, le=1000, description="at most this many versions (1-1000)")
    newest_first: bool = Field(False, description="the newest version first (default: the oldest first)")


class FactHistory(ResponseModel):
    """A page of a fact's linked versions, with the values they retired."""

    versions: list[MemoryView] = Field(description="the page's versions, oldest first (newest first if asked)")
    tombstones: list[TombstoneView] = Field(
        description="the values the page's versions retired, lifted ones included; the first page also has "
        "the slot's retired values of no version of this history"
    )
    total: int = Field(description="how many versions the whole history holds")
    next_cursor: str | None = Field(None, description="pass as cursor for the next page; null on the last page")


class TombstoneList(ResponseModel):
    """Values refused in a scope."""

    tombstones: list[TombstoneView] = Field(description="the tombstones, oldest first")


class TombstoneQuery(ScopeQuery):
    """Which tombstones to list."""

    subject_key: str | None = Field(None, max_length=256, description="only tombstones of this subject")
    kind: str | None = Field(None, max_length=64, description="only tombstones of this kind")
    include_lifted: bool = Field(False, description="also list lifted tombstones")


class ReviewItem(ResponseModel):
    """A fact awaiting review, with the scope it belongs to."""

    fact: MemoryView = Field(description="the pending fact")
    scope: ScopeView = Field(description="its scope")


class ReviewQueue(ResponseModel):
    """Facts awaiting review, oldest first."""

    items: list[ReviewItem] = Field(description="the pending facts, oldest first")
    total: int | None = Field(
        None, description="how many facts the filters match, beyond the limit too (asked with count)"
    )


class ReviewQuery(QueryModel):
    """Which pending facts to list."""

    kind: str | None = Field(None, max_length=64, description="only facts of this kind")
    subject_key: str | None = Field(None, max_length=256, description="only facts about this subject")
    older_than_seconds: float | None = Field(
        None, ge=0, le=1e10, description="only facts waiting at least this long (seconds)"
    )
    limit: int = Field(100, ge=1, le=1000, description="at most this many facts (1-1000)")
    count: bool = Field(False, description="also answer total: how many facts the filters match")


class ReviewDecision(WireModel):
    """Body of approve; ``scope`` picks the fact when its id exists in two scopes."""

    reason: str | None = Field(None, max_length=1_000, description="why (kept in the audit log)")
    scope: ScopeFields | None = Field(None, description="the fact's scope, when its id awaits review in two scopes")


class RejectDecision(ReviewDecision):
    """Body of reject: the reason is required, since it stays with the value's tombstone."""

    reason: str = Field(min_length=1, max_length=1_000, description="why the fact is wrong (kept with its tombstone)")

    @field_validator("reason")
    @classmethod
    def _not_blank(cls, reason: str) -> str:
        if not reason.replace("\x00", "").strip():
            raise InvalidInputError("reason must not be blank: say why the fact is rejected", field="reason")
        return reason


class EditAndApprove(WireModel):
    """Body of edit-and-approve: the reviewer's corrected text replaces the pending one."""

    text: str = Field(min_length=1, max_length=4_000, description="the reviewer's text for the fact")
    reason: str | None = Field(None, max_length=1_000, description="why it was edited")
    scope: ScopeFields | None = Field(None, description="the fact's scope, when its id awaits review in two scopes")
