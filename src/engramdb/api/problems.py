"""Errors as data: EngramError and validation failures become JSON that names the field."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from engramdb.errors import EngramError
from engramdb.models.problems import request_problem, validation_problem

log = logging.getLogger(__name__)


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


validation_body = validation_problem  # the name the MCP surface imports
