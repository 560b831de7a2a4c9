"""The server span of every HTTP request, when the process traces (``engramdb.traces``).

Outermost of the middleware: it continues the caller's trace (``traceparent``), covers the guard's
refusals as well as the routes, and every line logged while the request is served carries its
trace id. Named ``{method} {route template}``; never the path sent, nor its query string (a
subject key, a where-filter), nor a header's value.
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engramdb import traces
from engramdb.api.observe import route_template
from engramdb.logs import problem_note

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class Traced:
    """ASGI middleware: one SERVER span per HTTP request (installed only when the process traces)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "")
        method = method if method in _METHODS else "_OTHER"
        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers") or [] if k in _PROPAGATED}
        attributes: dict[str, traces.Value] = {
            "http.request.method": method,
            "url.scheme": scope.get("scheme", "http"),
            "network.protocol.version": scope.get("http_version", "1.1"),
        }
        if scope.get("server"):
            attributes["server.port"] = int(scope["server"][1])
        answer: dict[str, Any] = {}
        note: dict[str, Any] = {}  # the problem code of an error answer (problems.with_request_id fills it)
        token = problem_note.set(note)

        async def send_seen(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = int(message["status"])
                answer["requestId"] = dict(message.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
            await send(message)

        try:
            with traces.span(method, attributes, kind=traces.Kind.SERVER, carrier=carrier) as current:
                try:
                    await self.app(scope, receive, send_seen)
                finally:
                    _finish(current, scope, method, answer, note.get("code"))
        finally:
            problem_note.reset(token)


_PROPAGATED = frozenset({b"traceparent", b"tracestate"})


def _finish(current: traces.Noted, scope: Scope, method: str, answer: dict[str, Any], code: str | None) -> None:
    """Name the span by its route template and note the answer: status, request id, error code."""
    route = route_template(scope)
    if route:
        current.set_attribute("http.route", route)
        current.update_name(f"{method} {route}")
    status = answer.get("status")
    if status is not None:
        current.set_attribute("http.response.status_code", status)
    if answer.get("requestId"):
        current.set_attribute("engramdb.request_id", answer["requestId"])
    if code:
        current.set_attribute("engramdb.error.code", code)
    if status is None or status >= 500:  # a 4xx is the client's error, not the server's (HTTP conventions)
        traces.failed(current, code or (str(status) if status else "incomplete_response"))
