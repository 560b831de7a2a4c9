"""The review queue (one decision at a time or several) and the audit log with its verification."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from engramdb.api.routes import authenticated
from engramdb.api.ui.common import SCOPE_FIELDS, call, part, render, replace_url
from engramdb.core.auth import Caller
from engramdb.errors import InvalidInputError
from engramdb.models.lifecycle import ReviewItem

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
Decision = Literal["approve", "reject", "edit"]
CHANGED = {"HX-Trigger": "engram:changed"}  # the header's counts refresh


def _queue(request: Request, caller: Caller) -> list[ReviewItem]:
    return list(call(request, caller, "review_queue", {"limit": 1000}).items)


def _decide(request: Request, caller: Caller, item: ReviewItem, decision: Decision, reason: str, text: str) -> str:
    """Make one decision on a pending fact; return what happened, in words."""
    scope = {k: item.scope[k] for k in SCOPE_FIELDS}
    path = {"fact_id": item.fact.id}
    said = item.fact.event.get("text", "")
    why = {"reason": reason} if reason else {}
    if decision == "approve":
        call(request, caller, "approve", path, body=why, scope=scope)
        return f"Approved “{said}”."
    if decision == "reject":
        call(request, caller, "reject", path, body={"reason": reason}, scope=scope)
        return f"Rejected “{said}”."
    call(request, caller, "edit_and_approve", path, body={"text": text, **why}, scope=scope)
    return f"Edited and approved: “{text}”."


@router.get("/ui/part/review")
@part
def queue(request: Request, caller: Authenticated) -> HTMLResponse:
    return render(
        request,
        "review.html",
        headers=replace_url(request, "review"),
        items=_queue(request, caller),
        caller=caller,
        done=None,
    )


@router.post("/ui/part/review/decide")
@part
def decide(
    request: Request,
    caller: Authenticated,
    decision: Annotated[Decision, Form()],
    ids: Annotated[list[str] | None, Form()] = None,
    reason: Annotated[str, Form()] = "",
    text: Annotated[str, Form()] = "",
) -> HTMLResponse:
    """One decision for each fact named (a single item's form names one; the bulk form several)."""
    if not ids:
        raise InvalidInputError("select at least one fact", field="ids")
    if decision == "reject" and not reason.strip():
        raise InvalidInputError("say why the fact is rejected: a reason is required", field="reason")
    pending = {item.fact.id: item for item in _queue(request, caller)}
    missing = [i for i in ids if i not in pending]
    if missing:
        raise InvalidInputError(f"fact {missing[0][:12]}… no longer awaits review", field="ids")
    done = [_decide(request, caller, pending[i], decision, reason, text) for i in ids]
    return render(
        request, "review.html", headers=CHANGED, items=_queue(request, caller), caller=caller, done=" ".join(done)
    )


class AuditFilters(BaseModel):
    """The audit page's filters, as its query string names them."""

    action: str | None = None
    target_id: str | None = Field(None, alias="targetId")
    actor_key_id: str | None = Field(None, alias="actorKeyId")
    after: int = Field(0, ge=0)
    limit: int = Field(100, ge=1, le=1000)


@router.get("/ui/part/audit")
@part
def audit(request: Request, caller: Authenticated, filters: Annotated[AuditFilters, Query()]) -> HTMLResponse:
    page = call(request, caller, "audit", filters.model_dump(by_alias=True))
    more = request.url.include_query_params(after=page.next_after).query if page.next_after else None
    return render(request, "audit.html", headers=replace_url(request, "audit"), page=page, filters=filters, more=more)


@router.get("/ui/part/audit/verify")
@part
def verify(request: Request, caller: Authenticated) -> HTMLResponse:
    return render(request, "verdict.html", verdict=call(request, caller, "verify_audit"))
