"""Records: a scope's knowledge plane searched with the where-language (docs/knowledge.md), and one
record with its properties, history and relationships.

A search is posted: a where may hold names and values that do not belong in an access log's URL.
The address bar keeps the scope and the labels only.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse

from engramdb.api.routes import authenticated
from engramdb.api.ui.common import SHOWN_VERSIONS, Scopes, base, call, part, render, scopes
from engramdb.api.ui.episodes import linked, title_of
from engramdb.core.auth import Caller
from engramdb.errors import InvalidInputError, NotFoundError

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
Text = Annotated[str, Form()]
LIMITS = (50, 200, 1000)


def _json(text: str, name: str, default: Any) -> Any:
    if not text.strip():
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidInputError(f"{name} is not JSON: {error.msg} at character {error.pos}", field=name) from None


def _labels(text: str) -> list[str]:
    return [label.strip() for label in text.replace(",", " ").split() if label.strip()]


def _page(request: Request, caller: Caller, chosen: Scopes, form: dict[str, str]) -> HTMLResponse:
    found, schema = None, None
    if chosen.current is not None:
        schema = call(request, caller, "records_schema", scope=chosen.fields())
        search = {
            "labels": _labels(form["labels"]),
            "where": _json(form["where"], "where", {}),
            "orderBy": _json(form["orderBy"], "orderBy", {}),
            "limit": int(form["limit"]) if form["limit"].isascii() and form["limit"].isdigit() else form["limit"],
            "count": True,
        }
        found = call(request, caller, "search_records", body=search, scope=chosen.fields())
    key = chosen.current.scope_key if chosen.current else ""
    url = f"{base(request)}/records?scope={key}" + (f"&labels={form['labels']}" if form["labels"] else "")
    return render(
        request,
        "records.html",
        headers={"HX-Replace-Url": url},
        caller=caller,
        scopes=chosen,
        form=form,
        found=found,
        schema=schema,
        limits=LIMITS,
        title_of=title_of,
    )


@router.get("/ui/part/records")
@part
def records(request: Request, caller: Authenticated, scope: str | None = None, labels: str = "") -> HTMLResponse:
    form = {"labels": labels, "where": "", "orderBy": "", "limit": "50"}
    return _page(request, caller, scopes(request, caller, scope), form)


@router.post("/ui/part/records")
@part
def search(
    request: Request,
    caller: Authenticated,
    scope: Text = "",
    labels: Text = "",
    where: Text = "",
    order_by: Annotated[str, Form(alias="orderBy")] = "",
    limit: Text = "50",
) -> HTMLResponse:
    form = {"labels": labels, "where": where, "orderBy": order_by, "limit": limit}
    return _page(request, caller, scopes(request, caller, scope or None), form)


def _holding_record(request: Request, caller: Caller, record_id: str, scope: str | None) -> tuple[Scopes, Any]:
    """The scope that holds a record (the one named, else the first of the key's scopes that does)."""
    if scope:
        chosen = scopes(request, caller, scope)
        return chosen, call(request, caller, "get_record", {"record_id": record_id}, scope=chosen.fields())
    listed = scopes(request, caller, None).listed
    for summary in listed[:200]:
        chosen = Scopes(listed, summary)
        try:
            return chosen, call(request, caller, "get_record", {"record_id": record_id}, scope=chosen.fields())
        except NotFoundError:
            continue
    raise NotFoundError(f"no record {record_id} in a scope this key may name", id=record_id)


def _newest_versions(
    request: Request, caller: Caller, record_id: str, current: int, fields: dict[str, Any]
) -> list[Any]:
    """The newest versions, the current one last, as many of SHOWN_VERSIONS as one answer holds (a page
    stops early at the answer's byte limit: its first versions came, the newest did not)."""

    def since(back: int) -> Any:  # versions run 1, 2, ...: the cursor is the version before the first
        cursor = {"cursor": str(current - back)} if current > back else {}
        query = {"record_id": record_id, "limit": SHOWN_VERSIONS, **cursor}
        return call(request, caller, "record_history", query, scope=fields)

    page = since(SHOWN_VERSIONS)
    if page.next_cursor is None:
        return list(page.versions)
    back, shown = 1, since(1).versions  # the current version alone always fits
    while back < SHOWN_VERSIONS and (wider := since(back * 2)).next_cursor is None:
        back, shown = back * 2, wider.versions
    return list(shown)


@router.get("/ui/part/records/{record_id}")
@part
def record(request: Request, caller: Authenticated, record_id: str, scope: str | None = None) -> HTMLResponse:
    chosen, found = _holding_record(request, caller, record_id, scope)
    history = _newest_versions(request, caller, record_id, found.version, chosen.fields())
    links, names = linked(request, caller, record_id, "RECORD", chosen.fields())
    key = chosen.current.scope_key if chosen.current else ""
    return render(
        request,
        "record.html",
        headers={"HX-Replace-Url": f"{base(request)}/records/{record_id}?scope={key}"},
        caller=caller,
        record=found,
        history=history,
        earlier=found.version - len(history),
        links=links,
        names=names,
        scope=chosen.current,
        scope_key=key,
        title=title_of(found.properties),
        show=_shown,
    )


def _shown(value: Any) -> str:
    """A property's value as text: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
