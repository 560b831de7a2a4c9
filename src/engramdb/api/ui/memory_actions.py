"""What a person does to one memory from its page: importance, pin, archive, restore (each with a
reason, audited), and delete (a dry run names what would go; a second step confirms).

Every action is an operation of the registry, as its key's caller: a role that may not do it is
refused here as on REST. The page shows only the actions the key's role may take.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse

from engramdb.api.routes import authenticated
from engramdb.api.ui.common import base, call, holding, part, render
from engramdb.api.ui.episodes import episode_page
from engramdb.api.ui.timeline import timeline_page
from engramdb.core.auth import Caller
from engramdb.errors import InvalidInputError

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
Kind = Literal["facts", "episodes"]
Text = Annotated[str, Form()]
OPS = {  # page kind -> (the operations' noun, their id parameter)
    "facts": ("fact", "fact_id"),
    "episodes": ("episode", "event_id"),
}


def _reason(reason: str) -> str:
    if not reason.strip():
        raise InvalidInputError("say why: a reason is required (it goes to the audit log)", field="reason")
    return reason.strip()


def _page(request: Request, caller: Caller, kind: Kind, memory_id: str, scope: str, done: str) -> HTMLResponse:
    if kind == "facts":
        return timeline_page(request, caller, memory_id, scope or None, done=done)
    return episode_page(request, caller, memory_id, scope or None, done=done)


@router.post("/ui/part/memory/{kind}/{memory_id}/importance")
@part
def importance(
    request: Request,
    caller: Authenticated,
    kind: Kind,
    memory_id: str,
    value: Text,
    reason: Text = "",
    scope: Text = "",
) -> HTMLResponse:
    try:
        number = float(value)
    except ValueError:
        raise InvalidInputError("the importance is a number from 0 to 1", field="importance") from None
    noun, id_name = OPS[kind]
    fields = holding(request, caller, memory_id, scope or None).fields()
    body = {"importance": number, "reason": _reason(reason)}
    marks = call(request, caller, f"mark_{noun}", {id_name: memory_id}, body=body, scope=fields)
    return _page(request, caller, kind, memory_id, scope, f"Importance set to {marks.importance:g}.")


@router.post("/ui/part/memory/facts/{memory_id}/pin")
@part
def pin(
    request: Request, caller: Authenticated, memory_id: str, pinned: Text, reason: Text = "", scope: Text = ""
) -> HTMLResponse:
    fields = holding(request, caller, memory_id, scope or None).fields()
    body = {"pinned": pinned == "true", "reason": _reason(reason)}
    marks = call(request, caller, "mark_fact", {"fact_id": memory_id}, body=body, scope=fields)
    done = "Pinned: the aging sweep never archives it." if marks.pinned else "Unpinned."
    return _page(request, caller, "facts", memory_id, scope, done)


@router.post("/ui/part/memory/{kind}/{memory_id}/archive")
@part
def archive(
    request: Request, caller: Authenticated, kind: Kind, memory_id: str, reason: Text = "", scope: Text = ""
) -> HTMLResponse:
    noun, id_name = OPS[kind]
    fields = holding(request, caller, memory_id, scope or None).fields()
    call(request, caller, f"archive_{noun}", {id_name: memory_id}, body={"reason": _reason(reason)}, scope=fields)
    return _page(request, caller, kind, memory_id, scope, "Archived: recall leaves it out until it is restored.")


@router.post("/ui/part/memory/{kind}/{memory_id}/restore")
@part
def restore(
    request: Request, caller: Authenticated, kind: Kind, memory_id: str, reason: Text = "", scope: Text = ""
) -> HTMLResponse:
    noun, id_name = OPS[kind]
    fields = holding(request, caller, memory_id, scope or None).fields()
    call(request, caller, f"restore_{noun}", {id_name: memory_id}, body={"reason": _reason(reason)}, scope=fields)
    return _page(request, caller, kind, memory_id, scope, "Restored: recall finds it again.")


@router.post("/ui/part/memory/{kind}/{memory_id}/delete")
@part
def delete(
    request: Request, caller: Authenticated, kind: Kind, memory_id: str, scope: Text = "", confirm: Text = ""
) -> HTMLResponse:
    """Without ``confirm``: a dry run, and the confirmation naming what would go. With it: gone."""
    noun, id_name = OPS[kind]
    chosen = holding(request, caller, memory_id, scope or None)
    key = chosen.current.scope_key if chosen.current else ""
    dry_run = confirm != "yes"
    answer = call(request, caller, f"delete_{noun}", {id_name: memory_id, "dryRun": dry_run}, scope=chosen.fields())
    if dry_run:
        return render(
            request, "delete_memory.html", noun=noun, kind=kind, memory_id=memory_id, scope_key=key, answer=answer
        )
    headers = {"HX-Replace-Url": f"{base(request)}/memories?scope={key}"}
    return render(request, "deleted_memory.html", headers=headers, noun=noun, answer=answer, scope_key=key)
