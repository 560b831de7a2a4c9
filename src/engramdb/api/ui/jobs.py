"""Jobs: the server's background jobs (aging, usage, copies) and the queue of model jobs, their state
and last error; running the aging sweep now (admin keys, after a confirmation)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse

from engramdb.api.routes import authenticated
from engramdb.api.ui.common import base, call, part, render, replace_url
from engramdb.core.auth import Caller

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
State = Literal["", "queued", "running", "done", "failed"]


def _page(request: Request, caller: Caller, state: State, done: str | None = None) -> HTMLResponse:
    supervisor = call(request, caller, "list_jobs").jobs
    model = call(request, caller, "list_assist_jobs", {"state": state or None, "limit": 100}).jobs
    policy = call(request, caller, "get_policy")
    headers = {"HX-Replace-Url": f"{base(request)}/jobs" + (f"?state={state}" if state else "")}
    return render(
        request,
        "jobs.html",
        headers=headers,
        caller=caller,
        supervisor=supervisor,
        model=model,
        state=state,
        policy=policy,
        done=done,
    )


@router.get("/ui/part/jobs")
@part
def jobs(request: Request, caller: Authenticated, state: State = "") -> HTMLResponse:
    response = _page(request, caller, state)
    response.headers.update(replace_url(request, "jobs"))
    return response


@router.post("/ui/part/jobs/aging")
@part
def run_aging(request: Request, caller: Authenticated, confirm: Annotated[str, Form()] = "") -> HTMLResponse:
    """Without ``confirm``: what the sweep does, to confirm. With it: the sweep runs now."""
    if confirm != "yes":
        return render(request, "run_aging.html", policy=call(request, caller, "get_policy"))
    ran = call(request, caller, "run_aging")
    done = (
        f"Aging sweep done: {ran.weighed} memories weighed, {ran.archived} archived, "
        f"{ran.erased_episodes} episodes and {ran.erased_facts} facts erased by retention."
    )
    return _page(request, caller, "", done=done)
