"""The OpenAPI document as the server really answers: who may call, which problems come back,
and the interactive docs served from installed files (no network needed to read them)."""

from __future__ import annotations

from importlib import resources
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from engramdb.models.operation import Operation
from engramdb.models.problems import Problem

ASSETS = "/docs/assets"
# What each error status means for any operation that can answer it.
PROBLEMS: dict[int, str] = {
    400: "The body is not a JSON document the server can read (code bad_request), e.g. nested too deep.",
    401: "No key, or an unknown or revoked one (code unauthenticated).",
    403: "The key's role or scope grant does not cover the request (code forbidden); the field names the "
    "scope field it was not granted.",
    404: "No such memory, tombstone or key in the caller's scope (code not_found).",
    409: "The request conflicts with stored state (code conflict): a tombstoned value (tombstoneId, reason), "
    "a fact that is no longer current, a fact id found in two scopes, the tenant's last admin key, a record's "
    "mergeBy values that another record has.",
    422: "A field is malformed, too long or inconsistent (code invalid_input); field names the first one and "
    "errors lists them all.",
    500: "The server failed (code internal); requestId is what its log names the failure by.",
    501: "No chat model is configured (code model_not_configured): the message says how to set one; nothing "
    "was written.",
    502: "The embedding model failed (code embedding_failed), or the chat model (model_failed, or "
    "model_output_invalid when its answer stayed unusable after the repair turns); retryable tells whether a "
    "retry may succeed.",
    413: "The body is larger than the server's limit, ENGRAM_MAX_BODY_BYTES (code payload_too_large, field body); "
    "refused before it is read.",
    429: "The key is over its rate limit, ENGRAM_RATE_LIMIT_PER_SECOND (code rate_limited); Retry-After says when "
    "to try again.",
    503: "The store is busy or unreachable (code backend_unavailable, retryable), or the server is serving its "
    "limit of requests at once, ENGRAM_MAX_IN_FLIGHT (code overloaded); Retry-After says when to try again.",
    504: "The chat model did not answer within llm.timeoutSeconds (code model_timeout, retryable).",
}


_RETRY_AFTER = {"Retry-After": {"description": "seconds to wait before retrying", "schema": {"type": "integer"}}}


def responses(op: Operation[Any]) -> dict[int | str, dict[str, Any]]:
    """Every status ``op`` can answer besides its success, each with the problem schema."""
    statuses = set(op.errors) | {500}
    if not op.public:
        statuses |= {401, 403, 429, 503}
    if op.body or op.query or op.path_params:
        statuses.add(422)
    if op.body:
        statuses |= {400, 413}
    documented: dict[int | str, dict[str, Any]] = {
        s: {"model": Problem, "description": PROBLEMS[s]} | ({"headers": _RETRY_AFTER} if s in (429, 503) else {})
        for s in sorted(statuses)
    }
    if op.created_status:
        documented[200] = {"model": op.output, "description": "Already stored with this id: nothing changed."}
    return documented


def install_docs(app: FastAPI) -> None:
    """Serve ``/docs`` (Swagger UI) and ``/redoc`` with assets from an installed package."""
    static = resources.files("fastapi_offline") / "static"
    app.mount(ASSETS, StaticFiles(directory=str(static)), name="docs-assets")
    title = f"{app.title} {app.version}"
    assets = ASSETS.lstrip("/")  # relative, so the pages also work behind a proxy's path prefix

    @app.get("/docs", include_in_schema=False)
    def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="openapi.json",
            title=title,
            swagger_js_url=f"{assets}/swagger-ui-bundle.js",
            swagger_css_url=f"{assets}/swagger-ui.css",
            swagger_favicon_url=f"{assets}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None, "persistAuthorization": False},
        )

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url="openapi.json",
            title=title,
            redoc_js_url=f"{assets}/redoc.standalone.js",
            redoc_favicon_url=f"{assets}/favicon.png",
            with_google_fonts=False,
        )
