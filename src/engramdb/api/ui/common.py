"""What every part shares: the caller, calling an operation, the chosen scope, rendering, errors."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from engramdb.contract.canonical import is_sha256_hex
from engramdb.contract.events import Scope
from engramdb.core import auth
from engramdb.core.auth import PERMISSIONS, Caller
from engramdb.core.operations import run
from engramdb.errors import AuthenticationError, EngramError, NotFoundError
from engramdb.models.base import ScopeView
from engramdb.models.inputs import build_inputs
from engramdb.models.operations import BY_NAME
from engramdb.models.scopes import ScopeSummary

log = logging.getLogger(__name__)
T = TypeVar("T")
SCOPE_FIELDS = ("agentId", "profileId", "privacyScope", "participantScopeHash", "sandboxEligible")

templates = Environment(
    loader=PackageLoader("engramdb.api.ui", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),  # stored text is text
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_HEX_ID = re.compile(r"\b([0-9a-f]{8})[0-9a-f]{56}\b")


def short_ids(text: str | None) -> str:
    """``text`` with each 64-hex id cut to its first 8 characters (an unbroken id widens a column)."""
    return _HEX_ID.sub(r"\1…", text or "")


def scope_key_of(scope: ScopeView) -> str:
    """The digest of a scope given by its five fields (as pages link to it)."""
    return auth.scope_key(Scope.model_validate(scope.wire()))


templates.filters["short_ids"] = short_ids
templates.globals["scope_key_of"] = scope_key_of


SHOWN_VERSIONS = 100  # the newest versions a record's or a fact's page lists
SCOPES_SHOWN = 1000  # the most recently written scopes a page offers to choose from


def base(request: Request) -> str:
    """The dashboard's URL prefix (behind a proxy, its root path comes first)."""
    return f"{request.scope.get('root_path', '')}/ui"


def may(caller: Caller, permission: str | None) -> bool:
    """True when the caller's role has ``permission`` (what a page offers, not what it enforces)."""
    return permission is None or caller.role in PERMISSIONS[permission].roles


def render(
    request: Request, name: str, status: int = 200, headers: Mapping[str, str] | None = None, **context: Any
) -> HTMLResponse:
    """The template ``name`` rendered with ``context`` (every value escaped unless marked safe)."""
    html = templates.get_template(name).render(base=base(request), may=may, **context)
    return HTMLResponse(html, status_code=status, headers=dict(headers or {}))


def call(
    request: Request,
    caller: Caller,
    name: str,
    values: Mapping[str, Any] | None = None,
    *,
    body: Mapping[str, Any] | None = None,
    scope: Mapping[str, Any] | None = None,
) -> Any:
    """Run operation ``name`` as ``caller``: validated like any surface, refused like any surface."""
    op = BY_NAME[name]
    clean = {k: v for k, v in (values or {}).items() if v not in (None, "")}
    return run(request.app.state.service, op, caller, build_inputs(op, clean, body=body, scope=scope))


def part(endpoint: Callable[..., HTMLResponse]) -> Callable[..., HTMLResponse]:
    """An endpoint whose EngramErrors answer an HTML problem (401 stays JSON: the page signs in again)."""

    @functools.wraps(endpoint)
    def wrapped(request: Request, *args: Any, **kwargs: Any) -> HTMLResponse:
        try:
            return endpoint(request, *args, **kwargs)
        except AuthenticationError:
            raise
        except EngramError as error:
            log.debug("dashboard part %s refused: %s", request.url.path, error.code)
            # An action's problem goes to the message area; a page's replaces the page's content.
            headers = {} if request.method == "GET" else {"HX-Retarget": "#messages", "HX-Reswap": "innerHTML"}
            return render(request, "problem.html", error.http_status, headers, error=error)

    return cast(Callable[..., HTMLResponse], wrapped)


@dataclass(frozen=True)
class Scopes:
    """The scopes a key may name and the one a page shows."""

    listed: list[ScopeSummary]
    current: ScopeSummary | None

    def fields(self) -> dict[str, Any]:
        """The current scope's five fields, as requests name them."""
        return {} if self.current is None else {k: self.current[k] for k in SCOPE_FIELDS}


def scopes(request: Request, caller: Caller, scope_key: str | None) -> Scopes:
    """The scopes ``caller`` may name (its own when it has no memory yet), and the one asked for."""
    listed = list(call(request, caller, "list_scopes", {"limit": SCOPES_SHOWN}).scopes)
    if not listed and set(SCOPE_FIELDS) <= set(caller.grant):  # an agent key before its first write
        key = auth.scope_key(auth.resolve_scope(caller, {}))
        listed = [ScopeSummary(**caller.grant, scope_key=key, episodes=0, facts=0, pending=0, last_recorded_at="")]
    if not scope_key:
        return Scopes(listed, listed[0] if listed else None)
    chosen = next((s for s in listed if s.scope_key == scope_key), None)
    if chosen is None and listed and is_sha256_hex(scope_key):  # older than those shown
        chosen = next(iter(call(request, caller, "list_scopes", {"scopeKey": scope_key, "limit": 1}).scopes), None)
    if chosen is None:
        raise NotFoundError(f"no scope {scope_key[:12]}… that this key may name", field="scope")
    return Scopes(listed, chosen)


def holding(request: Request, caller: Caller, memory_id: str, scope_key: str | None) -> Scopes:
    """The scope a page of one memory shows: the one named, else the one that holds the memory."""
    if scope_key:
        return scopes(request, caller, scope_key)
    found = call(request, caller, "find_memory", {"memory_id": memory_id})
    fields = {k: found.event[k] for k in SCOPE_FIELDS if k in found.event}
    return scopes(request, caller, auth.scope_key(auth.resolve_scope(caller, fields)))


def replace_url(request: Request, page: str) -> dict[str, str]:
    """The header that shows a part's filters in the address bar (its page, the same query)."""
    query = request.url.query
    return {"HX-Replace-Url": f"{base(request)}/{page}" + (f"?{query}" if query else "")}
