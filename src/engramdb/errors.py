"""The EngramDB exception tree. Every error has a stable ``code`` and an ``http_status``.

    EngramError
    ├── InvalidInputError        422  a field is malformed, too long, or inconsistent
    ├── AuthenticationError      401  no key, or an unknown or revoked key
    ├── AuthorizationError       403  the key's role or scope grant does not cover the request
    ├── NotFoundError            404  no such memory (in the caller's scope)
    ├── ConflictError            409  the request conflicts with stored state
    ├── PayloadTooLargeError     413  the body is over the server's limit
    ├── BackendUnavailableError  503  the store is busy, locked or unreachable; retryable
    │   ├── OverloadedError      503  the server is at its limit of requests at once; retryable
    │   └── QueryTimeoutError    503  a statement ran past the statement timeout; retryable
    ├── EmbeddingFailedError     502  the embedder failed; retryable per failure (a timeout is)
    ├── ModelNotConfiguredError  501  a model-assisted operation, and no chat model is configured
    ├── ModelFailedError         502  the chat model failed; retryable per failure
    │   ├── ModelOutputError     502  its answer stayed unusable after the repair turns
    │   └── ModelTimeoutError    504  it did not answer within the timeout; retryable
    ├── InternalError            500  an unexpected failure; its cause is logged, never answered
    │  the SDK's own, for answers it cannot map and failures with no answer:
    ├── ClientRequestError       4xx  a 4xx whose code the SDK does not know
    ├── RateLimitedError         429  slow down (the key is over its rate limit); retryable
    ├── ServerError              5xx  a 5xx whose code the SDK does not know; retryable
    ├── TransportError           ---  no HTTP answer at all (refused, reset, DNS); retryable
    │   └── RequestTimeoutError  ---  no answer within the timeout; retryable
    ├── OutboxFullError          ---  the outbox holds its maximum of pending entries
    ├── MalformedEntryError      ---  an outbox entry that cannot be turned into a request
    └── UnavailableError         501  a capability this version does not have (it says which, and why)

Surfaces (REST, CLI, SDK) turn these into data with the same ``code``; nothing else is caught
broadly outside the request boundary, the job supervisor and the CLI entry point.
"""

from __future__ import annotations

from typing import Any


class EngramError(Exception):
    """Base of every error EngramDB raises on purpose."""

    code = "engram_error"
    http_status = 500
    retryable = False

    def __init__(self, message: str, *, field: str | None = None, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.context = context

    def to_dict(self) -> dict[str, Any]:
        """Return the error as the JSON body every surface uses."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field is not None:
            body["field"] = self.field
        body.update({k: v for k, v in self.context.items() if v is not None})
        return body


class InvalidInputError(EngramError):
    code = "invalid_input"
    http_status = 422


class AuthenticationError(EngramError):
    code = "unauthenticated"
    http_status = 401


class AuthorizationError(EngramError):
    code = "forbidden"
    http_status = 403


class NotFoundError(EngramError):
    code = "not_found"
    http_status = 404


class ConflictError(EngramError):
    code = "conflict"
    http_status = 409


class PayloadTooLargeError(EngramError):
    code = "payload_too_large"
    http_status = 413


class BackendUnavailableError(EngramError):
    code = "backend_unavailable"
    http_status = 503
    retryable = True


class OverloadedError(BackendUnavailableError):
    """The server is serving as many requests as it may at once; retry after ``Retry-After``."""

    code = "overloaded"


class QueryTimeoutError(BackendUnavailableError):
    """A statement ran past the database's statement timeout and was cancelled (PostgreSQL's
    SQLSTATE 57014); its connection is free again. Retry after ``Retry-After``, or ask for less."""

    code = "query_timeout"


class _DependencyFailedError(EngramError):
    """A dependency (the embedder, the chat model) failed: whether trying again may help is
    said per failure, not per class."""

    retryable = True

    def __init__(self, message: str, *, retryable: bool = True, field: str | None = None, **context: Any) -> None:
        super().__init__(message, field=field, **context)
        self.retryable = retryable


class EmbeddingFailedError(_DependencyFailedError):
    """The embedding model or endpoint failed.

    ``retryable`` is per failure: a timeout or a 5xx from an endpoint may pass, a malformed
    answer or a missing model package will not.
    """

    code = "embedding_failed"
    http_status = 502


class ModelNotConfiguredError(EngramError):
    """A model-assisted operation (extraction, reflection, consolidation) with no chat model set."""

    code = "model_not_configured"
    http_status = 501


class ModelFailedError(_DependencyFailedError):
    """The chat model's endpoint failed: unreachable, an HTTP error, an answer that is not a chat
    completion. ``retryable`` is per failure, as for ``EmbeddingFailedError``."""

    code = "model_failed"
    http_status = 502


class ModelOutputError(ModelFailedError):
    """The model answered, but not with JSON of the asked shape, even after the repair turns."""

    code = "model_output_invalid"


class ModelTimeoutError(ModelFailedError):
    """The model did not answer within the configured timeout."""

    code = "model_timeout"
    http_status = 504


class InternalError(EngramError):
    """A failure the server did not expect, such as a driver error no rule recognises.

    The message stays generic; the cause is chained (``raise ... from``) so that the request
    boundary logs its traceback.
    """

    code = "internal"
    http_status = 500


class ClientRequestError(EngramError):
    code = "bad_request"
    http_status = 400


class RateLimitedError(EngramError):
    code = "rate_limited"
    http_status = 429
    retryable = True


class ServerError(EngramError):
    code = "server_error"
    http_status = 500
    retryable = True


class TransportError(EngramError):
    """No HTTP answer: the connection was refused, reset or never established."""

    code = "transport_error"
    http_status = 0
    retryable = True


class RequestTimeoutError(TransportError):
    code = "timeout"


class OutboxFullError(EngramError):
    """The outbox already holds its maximum of pending entries; nothing was appended."""

    code = "outbox_full"
    http_status = 503
    retryable = True


class MalformedEntryError(EngramError):
    """An outbox entry whose stored body no longer parses as a contract event."""

    code = "malformed_entry"
    http_status = 0


class UnavailableError(EngramError):
    """Asked for something this version cannot do yet (model-assisted extraction, deletion): the
    message names what is missing and what to do instead. Nothing was done."""

    code = "unavailable"
    http_status = 501
