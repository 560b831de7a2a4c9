"""The two ways a host reaches the tools, and who the tools act as on each.

- **stdio** (``engram mcp``): the host launches the command; the five scope fields come from its
  flags, and every call acts as an ``agent`` of the configured tenant bound to that scope.
- **streamable HTTP** at ``/mcp`` in the REST server: every HTTP request carries a bearer key,
  authenticated before the MCP layer sees it; tools act as that key, which must be an ``agent``
  key (its grant fixes all five fields). Other keys may connect, but every tool call answers a
  ``forbidden`` tool error.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from engramdb.api.guard import CALLER_KEY
from engramdb.api.lane import FairLane
from engramdb.api.mcp.refusals import as_problems
from engramdb.api.mcp.server import build_server
from engramdb.api.problems import problem_body
from engramdb.contract.events import Scope as MemoryScope
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.errors import AuthenticationError, AuthorizationError, EngramError


def scoped_caller(caller: Caller) -> Caller:
    """Return ``caller`` if it may use the MCP tools: an agent key whose grant fixes the scope."""
    missing = [name for name in auth.SCOPE_FIELDS if caller.grant.get(name) is None]
    if caller.role != "agent" or missing:
        detail = f"it does not fix {', '.join(missing)}" if missing else "it is not an agent key"
        raise AuthorizationError(
            f"MCP tools need an agent key whose grant fixes all five scope fields; this "
            f"{caller.role} key cannot be used ({detail}). Create one with `engram keys create "
            f"--role agent --agent-id … --profile-id … --participant … --privacy … "
            f"--sandbox-eligible …`.",
            field=missing[0] if missing else "role",
            role=caller.role,
        )
    return caller


def configured_caller(tenant: str, scope: MemoryScope) -> Caller:
    """The caller of ``engram mcp``: an agent of ``tenant`` bound to the configured scope."""
    return Caller(tenant=tenant, key_id="local-mcp", role="agent", grant=scope.wire())


def serve_stdio(service: MemoryService, caller: Caller) -> None:
    """Serve the tools over stdin/stdout as ``caller`` until the host closes the pipe."""
    caller = scoped_caller(caller)
    build_server(service, lambda _ctx: caller, transport="stdio").run("stdio")


def _http_caller(ctx: Context) -> Caller:
    """The caller of an HTTP tool call: the key the bearer gate authenticated for this request."""
    request = ctx.request_context.request
    caller = getattr(request, "scope", {}).get(CALLER_KEY)
    if not isinstance(caller, Caller):  # unreachable behind the gate; refuse rather than guess
        raise AuthenticationError("missing bearer key (Authorization: Bearer egm.…)")
    return scoped_caller(caller)


class _BearerGate:
    """ASGI wrapper: authenticate every request's bearer key before the MCP layer sees it.

    A missing, unknown or revoked key is answered 401 with the REST API's error body; otherwise
    the caller rides in the ASGI scope to the tools of this very request, so a revoked key stops
    working at its next request.
    """

    def __init__(self, app: ASGIApp, service: MemoryService) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = auth.bearer_token(Headers(scope=scope).get("authorization", ""))
        try:  # the request guard in front of the app has usually authenticated it already
            known = scope.get(CALLER_KEY)
            caller = (
                known
                if isinstance(known, Caller)
                else await anyio.to_thread.run_sync(auth.authenticate, self.service.shared.store, token)
            )
        except EngramError as error:
            headers = {"WWW-Authenticate": 'Bearer realm="engramdb"'} if error.http_status == 401 else None
            answer = JSONResponse(problem_body(error), status_code=error.http_status, headers=headers)
            await answer(scope, receive, send)
            return
        if scope["method"] == "GET":
            # The stream a GET opens carries only a stateless server's pings, for ever, and held a place
            # among the server's requests in flight (ENGRAM_MAX_IN_FLIGHT): 32 of them shut out other
            # keys. The MCP specification lets a server without that stream answer 405.
            body = {"code": "method_not_allowed", "message": "/mcp opens no event stream here; send requests by POST"}
            await JSONResponse(body, status_code=405, headers={"Allow": "POST, DELETE"})(scope, receive, send)
            return
        await self.app({**scope, CALLER_KEY: caller}, receive, as_problems(send))


@dataclass(frozen=True)
class HttpEndpoint:
    """The streamable HTTP MCP endpoint: an ASGI app and the session manager it needs running."""

    app: ASGIApp
    server: MCPServer

    def running(self) -> AbstractAsyncContextManager[None]:
        """Run the MCP session manager (enter it in the host application's lifespan)."""
        return self.server.session_manager.run()


def http_endpoint(service: MemoryService, path: str = "/mcp", lane: FairLane | None = None) -> HttpEndpoint:
    """Return the ``/mcp`` endpoint of the REST server; route it at ``path`` itself, its recalls in
    the server's recall ``lane``."""
    server = build_server(service, _http_caller, transport="http", lane=lane)
    inner = server.streamable_http_app(
        streamable_http_path=path,
        # Stateless, plain JSON answers: each POST is authenticated and served on its own, and
        # no session outlives the key that opened it.
        stateless_http=True,
        json_response=True,
        # DNS-rebinding protection guards servers that trust whoever reaches them; this endpoint
        # trusts only a bearer key, which a browser page cannot supply. Host checks would refuse
        # a server behind a reverse proxy for no gain.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return HttpEndpoint(app=_BearerGate(inner, service), server=server)
