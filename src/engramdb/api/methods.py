"""The methods a path takes, across every route on it: ``Allow``, ``OPTIONS`` and ``HEAD``.

FastAPI routes each method of a path separately, so its router's 405 named only the first route's
method (``OPTIONS /v1/facts`` said ``Allow: POST``, though ``GET`` lists facts) and a ``HEAD`` of
a readable path was 405. Here a path's methods are those of every route matching it; ``HEAD`` runs
the ``GET`` without its body, and ``OPTIONS`` answers 204 with ``Allow``. Only ``HEAD`` and
``OPTIONS`` requests pass through this module: the other methods cost nothing more.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def allowed_methods(routes: Iterable[BaseRoute], path: str) -> list[str]:
    """The methods some route takes at ``path`` (with ``HEAD`` where ``GET`` is, and ``OPTIONS``), sorted."""
    methods: set[str] = set()
    for route in routes:
        if isinstance(route, Route) and route.methods and route.path_regex.match(path):
            methods |= route.methods
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods | {"OPTIONS"}) if methods else []


class MethodsByPath:
    """ASGI middleware: ``HEAD`` as ``GET`` without the body, ``OPTIONS`` as 204 with ``Allow``."""

    def __init__(self, app: ASGIApp, routes: Iterable[BaseRoute]) -> None:
        self.app, self.routes = app, routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        allowed = allowed_methods(self.routes, scope["path"])
        if scope["method"] == "OPTIONS" and allowed:
            headers = [(b"allow", ", ".join(allowed).encode()), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 204, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        if scope["method"] == "HEAD" and "GET" in allowed:
            await self.app({**scope, "method": "GET"}, receive, _without_body(send))
            return
        await self.app(scope, receive, send)  # the router answers it: 404, or 405 naming ``allowed``


def _without_body(send: Send) -> Send:
    async def send_head(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return send_head
