"""The MCP layer's own refusals answered as problem JSON, the shape of every other error here.

The MCP package refuses a few requests before any JSON-RPC is read, in plain text and with no
field: a body over its 4 MB limit (413) and a POST not sent as JSON (400). A client reading the
REST API's errors would find neither a code nor the field at fault. The answer keeps its status
and its other headers (``Allow``, ``Retry-After``); the package's text is not repeated, since with
its debug setting on it may be a traceback.
"""

from __future__ import annotations

import json

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.types import Message, Send

from engramdb.api.problems import with_request_id
from engramdb.errors import PayloadTooLargeError

_REPLACED = (b"content-type", b"content-length")


def as_problems(send: Send) -> Send:
    """``send``, with any error answer that is not JSON replaced by problem JSON of the same status."""
    held: Message | None = None
    text = bytearray()

    async def sending(message: Message) -> None:
        nonlocal held
        if message["type"] == "http.response.start" and message["status"] >= 400 and not _json(message):
            held = message  # answered once its text is known
            return
        if held is None or message["type"] != "http.response.body":
            await send(message)
            return
        text.extend(message.get("body", b""))
        if message.get("more_body", False):
            return
        problem = with_request_id(_problem(held["status"], text.decode("utf-8", "replace")))
        body = json.dumps(problem, ensure_ascii=True, separators=(",", ":")).encode()
        kept = [(name, value) for name, value in held.get("headers", []) if name.lower() not in _REPLACED]
        headers = [*kept, (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": held["status"], "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return sending


def _json(start: Message) -> bool:
    return any(name.lower() == b"content-type" and b"json" in value.lower() for name, value in start.get("headers", []))


def _problem(status: int, text: str) -> dict[str, object]:
    if status == 413:
        limit = DEFAULT_MAX_REQUEST_BODY_SIZE
        message = f"the body is larger than the MCP endpoint's limit of {limit} bytes (one JSON-RPC message)"
        return {"code": PayloadTooLargeError.code, "message": message, "field": "body", "limitBytes": limit}
    if status == 400 and "content-type" in text.lower():
        message = "/mcp takes JSON-RPC sent as JSON: send Content-Type: application/json"
        return {"code": "bad_request", "message": message, "field": "content-type"}
    if status == 405:
        return {"code": "method_not_allowed", "message": "/mcp does not take this method (see the Allow header)"}
    if status == 406:
        message = "/mcp answers JSON or an event stream: send Accept: application/json, text/event-stream"
        return {"code": "bad_request", "message": message, "field": "accept"}
    if status >= 500:
        return {"code": "internal", "message": "the MCP endpoint failed (its request id names it in the log)"}
    return {"code": "bad_request", "message": f"the MCP endpoint refused the request (HTTP {status})"}
