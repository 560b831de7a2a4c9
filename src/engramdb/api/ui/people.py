"""People: find a user by the id the host application knows them by, see a participant's scopes,
export everything of them, or forget them (a dry run names what would go; a second step erases).

The user id is posted (never in a URL, so never in an access log), hashed by ``resolve_scope`` with
the tenant's secret salt, and dropped: the page and its address name the participant's hash only.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse

from engramdb.api.routes import authenticated
from engramdb.api.ui.common import base, call, part, render
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.errors import InvalidInputError
from engramdb.models.erasure import Forgotten
from engramdb.models.scopes import ScopeSummary

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
Text = Annotated[str, Form()]


@dataclass
class Participant:
    """One participant of the tenant, by hash, with the scopes that hold their memories."""

    hash: str
    scopes: list[ScopeSummary] = field(default_factory=list)

    @property
    def memories(self) -> int:
        return sum(s.episodes + s.facts for s in self.scopes)

    @property
    def last(self) -> str:
        return max((s.last_recorded_at for s in self.scopes), default="")


def _participants(request: Request, caller: Caller) -> dict[str, Participant]:
    found: dict[str, Participant] = defaultdict(lambda: Participant(""))
    for s in call(request, caller, "list_scopes", {"limit": 1000}).scopes:
        found[s.participant_scope_hash].hash = s.participant_scope_hash
        found[s.participant_scope_hash].scopes.append(s)
    return dict(sorted(found.items(), key=lambda item: item[1].last, reverse=True))


def _page(
    request: Request,
    caller: Caller,
    participant: str | None,
    *,
    done: str | None = None,
    found_user: bool = False,
    status: int = 200,
) -> HTMLResponse:
    auth.require(caller, "review.read")  # as the section says: reviewer and admin keys
    everyone = _participants(request, caller)
    chosen = None if participant is None else everyone.get(participant, Participant(participant))
    url = f"{base(request)}/people" + (f"?participant={participant}" if participant else "")
    return render(
        request,
        "people.html",
        status,
        {"HX-Replace-Url": url},
        caller=caller,
        everyone=everyone,
        chosen=chosen,
        done=done,
        found_user=found_user,
    )


@router.get("/ui/part/people")
@part
def people(request: Request, caller: Authenticated, participant: str | None = None) -> HTMLResponse:
    if participant is not None and not _is_hash(participant):
        raise InvalidInputError("a participant is named by 64 lower-hex characters", field="participant")
    return _page(request, caller, participant)


@router.post("/ui/part/people/find")
@part
def find(request: Request, caller: Authenticated, user_id: Annotated[str, Form(alias="userId")] = "") -> HTMLResponse:
    """Hash the user id with the tenant's salt (as ``POST /v1/scope/resolve`` does) and show them."""
    if not user_id.strip():
        raise InvalidInputError("type the user id your application knows them by", field="userId")
    resolved = call(request, caller, "resolve_scope", body={"userId": user_id})
    return _page(request, caller, resolved.participant_scope_hash, found_user=True)


@router.get("/ui/part/people/export")
def export(request: Request, caller: Authenticated, participant: str = "") -> JSONResponse:
    """Everything of one participant as a download (the lines `engram import` reads)."""
    answer = call(request, caller, "export_participant", {"participantScopeHash": participant})
    name = f"engramdb-participant-{participant[:12]}.json"
    return JSONResponse(answer.wire(), headers={"content-disposition": f'attachment; filename="{name}"'})


@router.post("/ui/part/people/forget")
@part
def forget(request: Request, caller: Authenticated, participant: Text = "", confirm: Text = "") -> HTMLResponse:
    """Without ``confirm``: a dry run and the confirmation naming what would go. With it: erased."""
    body = {"participantScopeHash": participant, "dryRun": confirm != "yes"}
    answer: Forgotten = call(request, caller, "forget_participant", body=body)
    if answer.dry_run:
        return render(request, "forget.html", participant=participant, answer=answer)
    done = (
        f"Forgot participant {participant[:8]}…: {answer.memories} memories, {answer.records} records, "
        f"{answer.relationships} relationships and {answer.tombstones} tombstones in {answer.scopes} scopes."
    )
    return _page(request, caller, participant, done=done)


def _is_hash(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)
