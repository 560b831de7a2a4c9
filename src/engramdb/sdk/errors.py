"""The mapping from problem JSON back to exception classes (the tree is in engramdb.errors).

A server answer keeps its ``code`` (the class is chosen by it), its ``field``, the rest of the
problem body in ``context`` and the real status in ``http_status``; ``retryable`` is true for
network failures, 429 and every 5xx.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

from engramdb.errors import (
    AuthenticationError,
    AuthorizationError,
    BackendUnavailableError,
    ClientRequestError,
    ConflictError,
    EngramError,
    InvalidInputError,
    MalformedEntryError,
    NotFoundError,
    OutboxFullError,
    RateLimitedError,
    RequestTimeoutError,
    ServerError,
    TransportError,
)

__all__ = [
    "ClientRequestError",
    "MalformedEntryError",
    "OutboxFullError",
    "RateLimitedError",
    "RequestTimeoutError",
    "ServerError",
    "TransportError",
    "error_class",
    "error_from_response",
    "error_from_transport",
    "is_retryable_status",
    "unreadable_answer",
]


_BY_STATUS: dict[int, type[EngramError]] = {
    401: AuthenticationError,
    403: AuthorizationError,
    404: NotFoundError,
    409: ConflictError,
    422: InvalidInputError,
    429: RateLimitedError,
    503: BackendUnavailableError,
}


def _subclasses(cls: type[EngramError]) -> Iterator[type[EngramError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def error_class(code: str | None, status: int) -> type[EngramError]:
    """Return the exception class for a problem ``code``, falling back on the HTTP status."""
    if code:
        for cls in _subclasses(EngramError):
            if cls.code == code:
                return cls
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else ClientRequestError


def is_retryable_status(status: int) -> bool:
    """True for statuses worth retrying: 408, 429 and every 5xx."""
    return status in (408, 429) or status >= 500


def error_from_response(response: httpx.Response) -> EngramError:
    """Return the typed exception for an error response (problem JSON or not)."""
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        body = {"message": response.text[:500] or response.reason_phrase}
    code = body.get("code") if isinstance(body.get("code"), str) else None
    message = str(body.get("message") or f"HTTP {response.status_code}")
    field = body.get("field") if isinstance(body.get("field"), str) else None
    context = {k: v for k, v in body.items() if k not in ("code", "message", "field")}
    error = error_class(code, response.status_code)(message, field=field, **context)
    error.http_status = response.status_code
    # The server says whether a retry may help (a malformed embedding answer will not); an
    # answer that does not say is judged by its status.
    said = body.get("retryable")
    error.retryable = said if isinstance(said, bool) else is_retryable_status(response.status_code)
    if code:
        error.code = code
    return error


def error_from_transport(exc: httpx.TransportError, what: str) -> TransportError:
    """Return the SDK error for an httpx failure that produced no response."""
    cls = RequestTimeoutError if isinstance(exc, httpx.TimeoutException) else TransportError
    return cls(f"{what}: {type(exc).__name__}: {exc}".rstrip(": "))


def unreadable_answer(response: httpx.Response, path: str, error: ValueError) -> ServerError:
    """Return the SDK error for a success answer that is not what the server sends: another service
    at the address, a proxy's login page. Retryable: the address may answer rightly later."""
    kind = response.headers.get("content-type", "no content type")
    detail = str(error).splitlines()[0][:200]
    failure = ServerError(f"an unreadable answer ({response.status_code}, {kind}) to {path}: {detail}")
    failure.http_status = response.status_code
    return failure
