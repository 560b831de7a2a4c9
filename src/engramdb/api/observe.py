"""Watching the server: one access log line and the metrics of every request, and ``/metrics``.

The access line is logged under the request's id (the JSON log's ``requestId``), the same id the
``X-Request-Id`` header and every error body carry, so one grep finds a failure's whole story.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import FastAPI, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engramdb import metrics
from engramdb.logs import problem_note

log = logging.getLogger("engramdb.access")


class Observe:
    """ASGI middleware: time each HTTP request, count it by route template and status, count
    error answers by their problem code, and log one access line."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client gets if the app raises before answering
        outer = problem_note.get()  # the server span's (api/tracing.py), when the process traces
        note: dict[str, Any] = {} if outer is None else outer
        token = problem_note.set(note)

        async def send_seen(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_seen)
        finally:
            problem_note.reset(token)
            self._record(scope, status, note.get("code"), time.perf_counter() - started)

    @staticmethod
    def _record(scope: Scope, status: int, code: str | None, seconds: float) -> None:
        route = route_template(scope) or "unmatched"  # never the raw path: bounded labels
        method = scope.get("method", "")
        metrics.REQUESTS.labels(route, method, str(status)).inc()
        metrics.LATENCY.labels(route, method).observe(seconds)
        if status >= 400:
            metrics.ERRORS.labels(code or ("internal" if status >= 500 else str(status))).inc()
        level = logging.WARNING if status >= 500 else logging.INFO
        log.log(
            level,
            "%s %s %d",
            method,
            scope.get("path", ""),
            status,
            extra={
                "route": route,
                "status": status,
                "durationMs": round(seconds * 1000, 2),
                **({"code": code} if code else {}),
            },
        )


def route_template(scope: Scope) -> str | None:
    """The template of the route that answered (``/v1/facts/{fact_id}``), None when none did.

    FastAPI's router names only its own routes in the scope; a plain route (``/mcp``, ``/readyz``)
    is found by the endpoint it chose.
    """
    route = scope.get("route")
    if route is None and scope.get("endpoint") is not None:
        routes = getattr(scope.get("router"), "routes", ())
        route = next((r for r in routes if getattr(r, "endpoint", None) is scope["endpoint"]), None)
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else None


def install_metrics(app: FastAPI) -> None:
    """Route ``GET /metrics`` (no key: scrapers rarely hold one; it names routes and counts, no data)."""

    @app.get("/metrics", include_in_schema=False)
    def scrape() -> Response:
        return Response(metrics.render(), media_type=metrics.CONTENT_TYPE)
