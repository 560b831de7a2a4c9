"""Errors as data at the HTTP boundary: every failure answers problem JSON naming the field.

``EngramError`` answers its own status and code; validation errors 422; the router's 404/405 in
the same shape; anything else 500 ``internal`` with a generic message and the request id, under
which the traceback is logged. No driver text, SQL or stack reaches a client.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engramdb.api.methods import allowed_methods
from engramdb.contract.bounds import replace_lone_surrogates
from engramdb.errors import AuthenticationError, EngramError, NotFoundError, PayloadTooLargeError
from engramdb.logs import problem_note, request_id
from engramdb.models.problems import request_problem, validation_problem

log = logging.getLogger(__name__)

# Codes for the errors the router raises itself (no route; a route without this method).
_ROUTING_CODES = {404: NotFoundError.code, 405: "method_not_allowed", 413: PayloadTooLargeError.code}
_GIVEN_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
REQUEST_ID_HEADER = "x-request-id"


class ProblemResponse(JSONResponse):
    """Problem JSON with every non-ASCII character escaped. A message and a field may quote what the
    client sent: a lone surrogate there (``\\ud800``, which JSON lets through) becomes U+FFFD, since a
    strict parser refuses a document holding one even escaped."""

    def render(self, content: Any) -> bytes:
        sound = replace_lone_surrogates(content)
        return json.dumps(sound, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def problem_body(error: EngramError) -> dict[str, Any]:
    """The problem JSON of an EngramError, with the request id the log names it by; a 5xx also
    says whether a retry may help."""
    body = with_request_id(error.to_dict())
    if error.http_status >= 500:
        body["retryable"] = error.retryable
    return body


def not_json_hint(request: Request) -> str:
    """What a body's error adds when the body was not sent as JSON ("" when it was, or none was sent)."""
    sent = request.headers.get("content-type", "")
    if request.method not in ("POST", "PUT", "PATCH") or "json" in sent:
        return ""
    return f" (the body was sent as {sent or 'no content type'}; send JSON with Content-Type: application/json)"


def with_request_id(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with ``requestId``: the id in the X-Request-Id header and in the request's log lines."""
    note = problem_note.get()
    if note is not None:  # for the access log line and the error counter
        note["code"] = body.get("code")
    rid = request_id.get()
    return {**body, "requestId": rid} if rid else body


def error_response(error: EngramError) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="engramdb"'} if isinstance(error, AuthenticationError) else {}
    if error.context.get("retryAfterSeconds") is not None:
        headers["Retry-After"] = str(error.context["retryAfterSeconds"])
    return ProblemResponse(problem_body(error), status_code=error.http_status, headers=headers)


def install(app: FastAPI) -> None:
    """Register the handlers that turn errors into problem JSON, and the request-id boundary."""

    @app.exception_handler(EngramError)
    async def engram_error(_: Request, error: EngramError) -> JSONResponse:
        if error.http_status >= 500 and error.http_status != 501:  # 501: a feature not configured, no failure
            log.error("request %s failed: %s", request_id.get(), error.message, exc_info=error)
        return error_response(error)

    @app.exception_handler(RequestValidationError)
    async def request_invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        body = request_problem(list(error.errors()))
        if body["field"] == "body":
            body["message"] += not_json_hint(request)
        return ProblemResponse(with_request_id(body), status_code=422)

    @app.exception_handler(ValidationError)
    async def model_invalid(_: Request, error: ValidationError) -> JSONResponse:
        return ProblemResponse(with_request_id(validation_problem(list(error.errors()))), status_code=422)

    @app.exception_handler(HTTPException)
    async def routing_error(request: Request, error: HTTPException) -> JSONResponse:
        unreadable = _unreadable_body(error)
        if unreadable is not None:  # as malformed JSON is answered: the body named, and why
            problem = request_problem([{"loc": ("body",), "msg": unreadable}])
            return ProblemResponse(with_request_id(problem), status_code=422)
        body = {
            "code": _ROUTING_CODES.get(error.status_code, "bad_request"),
            "message": _routing_message(request, error),
        }
        headers = dict(error.headers or {})
        if error.status_code == 405:  # the router names one route's methods; a path may have several
            headers["Allow"] = ", ".join(allowed_methods(request.app.routes, request.url.path))
            body["message"] = f"{request.url.path} does not take {request.method}; it takes {headers['Allow']}"
        if error.status_code == 413:  # raised by the guard as a streamed body passed the limit
            body["field"] = "body"
        return ProblemResponse(with_request_id(body), status_code=error.status_code, headers=headers)

    app.add_middleware(RequestBoundary)


def _unreadable_body(error: HTTPException) -> str | None:
    """Why FastAPI could not read a JSON body, when it answered 400 for it (None for another error):
    bytes not in the encoding the parser took them for, JSON nested deeper than it goes, or a value
    it cannot convert (an integer of over 4,300 digits)."""
    if error.status_code != 400:
        return None
    cause = error.__cause__
    if isinstance(cause, UnicodeDecodeError):
        return f"the bytes are not valid {cause.encoding.upper()} ({cause.reason}); send JSON as UTF-8"
    if isinstance(cause, RecursionError):
        return "JSON nested too deeply to read (arrays and objects within one another)"
    if isinstance(cause, ValueError):
        return f"JSON that cannot be read: {cause}"
    return None


def _routing_message(request: Request, error: HTTPException) -> str:
    where = f"{request.method} {request.url.path}"
    if error.status_code == 404:
        return f"no route {where} (the routes are listed at /openapi.json)"
    if error.status_code == 413:
        return str(error.detail)
    return f"{where}: {error.detail}"


class RequestBoundary:
    """ASGI middleware: a request id for every request (``X-Request-Id``, the caller's own if it
    sends a sane one), and a 500 problem for any exception no handler turned into an answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(REQUEST_ID_HEADER.encode(), b"").decode("latin-1")
        rid = given if _GIVEN_ID.fullmatch(given) else uuid.uuid4().hex[:16]
        token = request_id.set(rid)
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []), (b"x-request-id", rid.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            log.exception("request %s (%s %s) failed", rid, scope.get("method"), scope.get("path"))
            if started:
                raise
            body = {
                "code": "internal",
                "message": f"internal error; the server logged it as request {rid}",
                "requestId": rid,
            }
            await JSONResponse(body, status_code=500, headers={"x-request-id": rid})(scope, receive, send)
        finally:
            request_id.reset(token)
