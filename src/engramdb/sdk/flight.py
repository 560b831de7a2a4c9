"""A recall sent to the server in the background, and its answer awaited until a deadline.

``MemorySession`` starts one per query (early with ``prefetch``, else at ``before_inference``)
and waits no longer than its recall timeout: a late or failed answer is an error string, never an
exception, so the host's inference goes on without memory.
"""

from __future__ import annotations

import contextvars
import time
from concurrent.futures import Executor, Future
from dataclasses import dataclass

from engramdb.contract.events import Scope
from engramdb.errors import EngramError
from engramdb.models.operations.recall import RECALL
from engramdb.models.recall import RecallRequest, RecallResponse
from engramdb.sdk import operations as op
from engramdb.sdk.client import Client
from engramdb.sdk.recall import RecallItem


@dataclass(frozen=True)
class Flight:
    """A remote recall under way."""

    session_id: str
    query: str
    future: Future[RecallResponse]


def recall_request(text: str, scope: Scope, limit: int, exclude_session_id: str | None) -> RecallRequest:
    """The recall a session sends for ``text``: its scope, its limit, its own session left out if asked."""
    body: dict[str, object] = {"query": text, "scope": scope.wire(), "limit": limit}
    if exclude_session_id is not None:
        body["excludeSessionId"] = exclude_session_id
    return RecallRequest.model_validate(body)


def launch(pool: Executor, client: Client, request: RecallRequest, flight: tuple[str, str], timeout: float) -> Flight:
    """Send ``request`` on ``pool`` as the flight of (session id, query text); the HTTP call itself
    gives up after ``timeout`` seconds."""
    call = op.call_for(RECALL, op.inputs_for(RECALL, (), request, {}))
    # In the caller's context: the host's current span (its trace) goes with the request.
    return Flight(*flight, pool.submit(contextvars.copy_context().run, client.send, call, timeout=timeout))


def answer(flight: Flight | None, deadline: float, timeout: float, limit: int) -> tuple[list[RecallItem], str | None]:
    """The flight's memories if they arrive by ``deadline`` (monotonic), else ``[]`` and why not."""
    if flight is None:
        return [], "recall could not start"
    try:
        response = flight.future.result(timeout=max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        flight.future.cancel()
        return [], f"timeout: no answer within {timeout * 1000:.0f} ms"
    except EngramError as error:
        if error.code == "timeout":  # the HTTP client's own timer fired first: the same event
            return [], f"timeout: no answer within {timeout * 1000:.0f} ms"
        return [], f"{error.code}: {error.message}"
    except ValueError as error:  # an answer that does not parse as a RecallResponse
        return [], f"unreadable answer: {type(error).__name__}"
    return [RecallItem.of(m) for m in response.memories[:limit]], None
