"""A fact's timeline: every version on valid and record time, why each ended, who did what; correcting,
retracting, and lifting a tombstone of its slot (memory_actions.py has the aging actions and delete)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse

from engramdb.api.routes import authenticated
from engramdb.api.ui import charts
from engramdb.api.ui.common import SHOWN_VERSIONS, base, call, holding, may, part, render, replace_url
from engramdb.core.auth import Caller
from engramdb.models.admin import AuditView
from engramdb.models.lifecycle import FactHistory

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]


def _doings(request: Request, caller: Caller, history: FactHistory) -> list[AuditView] | None:
    """The audit entries about the versions and their tombstones (None: the key may not read them)."""
    if not may(caller, "audit.read"):
        return None
    ids = [v.id for v in history.versions] + [t.tombstone_id for t in history.tombstones]
    found = {e.seq: e for i in ids for e in call(request, caller, "audit", {"targetId": i, "limit": 1000}).entries}
    return [found[seq] for seq in sorted(found)]


def timeline_page(
    request: Request, caller: Caller, fact_id: str, scope: str | None, done: str | None = None
) -> HTMLResponse:
    """The timeline of ``fact_id`` in ``scope`` (none named: the scope that holds it)."""
    chosen = holding(request, caller, fact_id, scope)
    # The newest versions, shown oldest first as the history reads; the earlier ones are counted.
    query = {"fact_id": fact_id, "newestFirst": True, "limit": SHOWN_VERSIONS}
    newest: FactHistory = call(request, caller, "fact_history", query, scope=chosen.fields())
    history = newest.model_copy(update={"versions": newest.versions[::-1]})
    drawing = charts.timeline(history.versions, [t.created_at for t in history.tombstones])
    current = next((v for v in history.versions if v.status == "active"), None)
    shown = next((v for v in history.versions if v.id == fact_id), None)
    opened_earlier = shown is None
    if opened_earlier:  # the version opened is older than the newest shown: still the page's focus
        shown = call(request, caller, "get_fact", {"fact_id": fact_id}, scope=chosen.fields())
    focus = current or (shown if shown is not None and shown.status == "archived" else None)
    key = chosen.current.scope_key if chosen.current else ""
    url = {"HX-Replace-Url": f"{base(request)}/facts/{fact_id}?scope={key}"}
    return render(
        request,
        "timeline.html",
        headers=url,
        caller=caller,
        fact_id=fact_id,
        scope_key=key,
        history=history,
        drawing=drawing,
        current=current,
        focus=focus,
        doings=_doings(request, caller, history),
        earlier=history.total - len(history.versions),
        opened_earlier=opened_earlier,
        done=done,
    )


@router.get("/ui/part/facts/{fact_id}")
@part
def timeline(request: Request, caller: Authenticated, fact_id: str, scope: str | None = None) -> HTMLResponse:
    response = timeline_page(request, caller, fact_id, scope)
    response.headers.update(replace_url(request, f"facts/{fact_id}"))
    return response


@router.post("/ui/part/facts/{fact_id}/correct")
@part
def correct(
    request: Request,
    caller: Authenticated,
    fact_id: str,
    text: Annotated[str, Form()],
    reason: Annotated[str, Form()],
    scope: Annotated[str, Form()] = "",
) -> HTMLResponse:
    fields = holding(request, caller, fact_id, scope or None).fields()
    # A person typed it: stated, whatever wrote the fact it corrects (a derived one would wait for review).
    answer = call(
        request,
        caller,
        "correct_fact",
        {"fact_id": fact_id, "origin": "stated"},
        body={"text": text, "reason": reason},
        scope=fields,
    )
    done = f"Corrected: now “{text}” ({answer.memory.status})."
    return timeline_page(request, caller, answer.id, scope or None, done=done)


@router.post("/ui/part/facts/{fact_id}/retract")
@part
def retract(
    request: Request,
    caller: Authenticated,
    fact_id: str,
    reason: Annotated[str, Form()],
    scope: Annotated[str, Form()] = "",
) -> HTMLResponse:
    fields = holding(request, caller, fact_id, scope or None).fields()
    call(request, caller, "retract_fact", {"fact_id": fact_id}, body={"reason": reason}, scope=fields)
    return timeline_page(request, caller, fact_id, scope or None, done="Retracted; its value is tombstoned.")


@router.post("/ui/part/facts/{fact_id}/lift/{tombstone_id}")
@part
def lift(
    request: Request,
    caller: Authenticated,
    fact_id: str,
    tombstone_id: str,
    reason: Annotated[str, Form()] = "",
    scope: Annotated[str, Form()] = "",
) -> HTMLResponse:
    """Lift a tombstone of the fact's slot: its value may become current again (audited, with the reason)."""
    call(request, caller, "lift_tombstone", {"tombstone_id": tombstone_id}, body={"reason": reason.strip()})
    return timeline_page(request, caller, fact_id, scope or None, done="Tombstone lifted: the value may be said again.")
