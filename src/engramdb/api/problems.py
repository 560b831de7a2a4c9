"""Errors as data: EngramError and validation failures become JSON that names the field."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from engramdb.errors import EngramError

log = logging.getLogger(__name__)


def _field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


def validation_body(errors: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the 422 body for pydantic errors: the first field, and every error listed."""
    details = [{"field": _field(tuple(e.get("loc", ()))), "message": e.get("msg", "")} for e in errors]
    first = details[0] if details else {"field": "body", "message": "invalid input"}
    return {
        "code": "invalid_input",
        "message": f"{first['field']}: {first['message']}",
        "field": first["field"],
        "errors": details,
    }


def install(app: FastAPI) -> None:
    """Register the handlers that turn errors into problem JSON."""

    @app.exception_handler(EngramError)
    async def engram_error(_: Request, error: EngramError) -> JSONResponse:
        if error.http_status >= 500:
            log.error("request failed: %s", error.message, exc_info=error)
        return JSONResponse(error.to_dict(), status_code=error.http_status)

    @app.exception_handler(RequestValidationError)
    async def request_invalid(_: Request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse(validation_body(list(error.errors())), status_code=422)

    @app.exception_handler(ValidationError)
    async def model_invalid(_: Request, error: ValidationError) -> JSONResponse:
        return JSONResponse(validation_body(list(error.errors())), status_code=422)
