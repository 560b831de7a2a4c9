"""Errors as data: EngramError and validation failures become JSON that names the field."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from engramdb.errors import EngramError, NotFoundError
from engramdb.models.problems import request_problem, validation_problem

log = logging.getLogger(__name__)

# Codes for the errors the router raises itself (no route; a route without this method).
_ROUTING_CODES = {404: NotFoundError.code, 405: "method_not_allowed"}


def install(app: FastAPI) -> None:
    """Register the handlers that turn errors into problem JSON."""

    @app.exception_handler(EngramError)
    async def engram_error(_: Request, error: EngramError) -> JSONResponse:
        if error.http_status >= 500:
            log.error("request failed: %s", error.message, exc_info=error)
        return JSONResponse(error.to_dict(), status_code=error.http_status)

    @app.exception_handler(RequestValidationError)
    async def request_invalid(_: Request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse(request_problem(list(error.errors())), status_code=422)

    @app.exception_handler(ValidationError)
    async def model_invalid(_: Request, error: ValidationError) -> JSONResponse:
        return JSONResponse(validation_problem(list(error.errors())), status_code=422)

    @app.exception_handler(HTTPException)
    async def routing_error(request: Request, error: HTTPException) -> JSONResponse:
        body = {"code": _ROUTING_CODES.get(error.status_code, "bad_request"),
                "message": _routing_message(request, error)}  # fmt: skip
        return JSONResponse(body, status_code=error.status_code, headers=error.headers)


def _routing_message(request: Request, error: HTTPException) -> str:
    where = f"{request.method} {request.url.path}"
    if error.status_code == 404:
        return f"no route {where} (the routes are listed at /openapi.json)"
    if error.status_code == 405:  # the router lists the methods the path takes in Allow
        return f"{request.url.path} does not take {request.method}; it takes {(error.headers or {}).get('Allow')}"
    return f"{where}: {error.detail}"


validation_body = validation_problem  # the name the MCP surface imports
