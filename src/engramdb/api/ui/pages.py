"""The shells: one page per section, with no data in it, and the files they load.

A shell needs no key: it names the part that holds its data, and the tab's script fetches that
part with the key from session storage. The address bar never holds a key. The navigation a
shell draws lists the sections every key may open; the header's part (``/ui/part/counts``),
fetched with the key, replaces it with those the key's role may open.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response

from engramdb.api.routes import authenticated
from engramdb.api.ui.common import base, call, may, render
from engramdb.core.auth import Caller
from engramdb.errors import NotFoundError

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]


@dataclass(frozen=True)
class Section:
    """A page of the navigation: its title and the permission its part needs (None: any key's)."""

    title: str
    needs: str | None = None
    label: str | None = None  # the navigation's shorter name


SECTIONS = {
    "memories": Section("Memories"),
    "recall": Section("Recall playground", label="Recall"),
    "records": Section("Records"),
    "graph": Section("Graph"),
    "people": Section("People", "review.read"),
    "review": Section("Review queue", "review.read", "Review"),
    "audit": Section("Audit log", "audit.read", "Audit"),
    "usage": Section("Usage", "audit.read"),
    "jobs": Section("Jobs", "jobs.read"),
    "admin": Section("Admin", "keys.manage"),
}
_OWN = resources.files("engramdb.api.ui") / "static"
ASSETS = {
    "app.css": (_OWN / "app.css", "text/css"),
    "app.js": (_OWN / "app.js", "text/javascript"),
    "graph.js": (_OWN / "graph.js", "text/javascript"),
    "favicon.svg": (_OWN / "favicon.svg", "image/svg+xml"),
    # htmx 2.0.3 as installed by pip (django-js-lib-htmx ships the upstream file unchanged).
    "htmx.min.js": (resources.files("js_lib_htmx") / "static" / "htmx" / "htmx.min.js", "text/javascript"),
}


@router.get("/")
def root(request: Request) -> RedirectResponse:
    return RedirectResponse(f"{base(request)}/memories", status_code=307)


@router.get("/favicon.ico")
def favicon() -> Response:
    """The dashboard's icon where a browser looks for one by itself (a page names it too)."""
    path, media_type = ASSETS["favicon.svg"]
    return FileResponse(str(path), media_type=media_type, headers={"cache-control": "public, max-age=86400"})


@router.get("/ui")
def home(request: Request) -> RedirectResponse:
    return RedirectResponse(f"{base(request)}/memories", status_code=307)


@router.get("/ui/assets/{name}")
def asset(name: str) -> Response:
    if name not in ASSETS:
        raise NotFoundError(f"no dashboard asset {name}", field="name")
    path, media_type = ASSETS[name]
    return FileResponse(str(path), media_type=media_type, headers={"cache-control": "public, max-age=3600"})


@router.get("/ui/signin")
def signin(request: Request) -> HTMLResponse:
    return render(request, "signin.html", title="Sign in")


@router.get("/ui/facts/{fact_id}")
def timeline_shell(request: Request, fact_id: str) -> HTMLResponse:
    return _shell(request, "Fact timeline", f"part/facts/{fact_id}", "memories")


@router.get("/ui/episodes/{event_id}")
def episode_shell(request: Request, event_id: str) -> HTMLResponse:
    return _shell(request, "Episode", f"part/episodes/{event_id}", "memories")


@router.get("/ui/records/{record_id}")
def record_shell(request: Request, record_id: str) -> HTMLResponse:
    return _shell(request, "Record", f"part/records/{record_id}", "records")


@router.get("/ui/{section}")
def section(request: Request, section: str) -> HTMLResponse:
    if section not in SECTIONS:
        raise NotFoundError(f"no dashboard page {section}", field="section")
    return _shell(request, SECTIONS[section].title, f"part/{section}", section)


def _shell(request: Request, title: str, part: str, section: str) -> HTMLResponse:
    query = request.url.query
    source = f"{base(request)}/{part}" + (f"?{query}" if query else "")
    shown = {path: s for path, s in SECTIONS.items() if s.needs is None}
    return render(request, "shell.html", title=title, source=source, section=section, sections=shown)


@router.get("/ui/part/session")
def session(caller: Authenticated) -> JSONResponse:
    """Who the key is: the sign-in page checks a key with it before keeping it."""
    return JSONResponse({"tenant": caller.tenant, "role": caller.role, "keyId": caller.key_id})


@router.get("/ui/part/counts")
def counts(request: Request, caller: Authenticated, section: str = "") -> HTMLResponse:
    """The header's line: who is signed in, how many facts await review, and the sections the key
    may open (the navigation, swapped in out of band)."""
    # Counted in the pending facts' index: listing up to 1,000 to count them cost each page ~60 ms.
    pending = (
        call(request, caller, "review_queue", {"limit": 1, "count": True}).total if may(caller, "review.read") else None
    )
    allowed = {path: s for path, s in SECTIONS.items() if may(caller, s.needs)}
    return render(request, "counts.html", caller=caller, pending=pending, sections=allowed, section=section)
