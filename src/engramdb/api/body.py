"""A request's JSON body, parsed and checked by the endpoint, in its worker thread.

FastAPI parses a declared body's JSON on the event loop (``await request.json()``). Parsing holds the
interpreter's lock whichever thread runs it, and its cost is per value: 16 MB of small values
(``[0,0,...]``, ``[{},{},...]``) held every other request for 0.5-0.9 s, repeatable by any key, where
16 MB of text takes 25 ms. So the served route reads the bytes (I/O only), and the endpoint refuses a
body of more than ``MAX_JSON_VALUES`` values before it parses the rest as FastAPI would: JSON when the
content type is ``application/json`` or ``+json``, the bytes as they came otherwise, and the same 422 for
a missing body or JSON that does not parse (api/problems.py renders both).
"""

from __future__ import annotations

import email.message
import json
from typing import Any

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError

from engramdb.api.problems import not_json_hint
from engramdb.contract.events import NUL_FREE
from engramdb.errors import InvalidInputError, PayloadTooLargeError
from engramdb.models.operation import Operation

# Far above any write's own limits (a batch is 100 episodes, a record write 10,000 values): parsing
# this many takes ~0.1 s. Counted as the bytes that open a value or part one from the next, strings
# included (one pass each, in C), so text dense with commas counts too.
MAX_JSON_VALUES = 1_000_000


async def raw_body(request: Request) -> bytes:
    """The body's bytes (a dependency of the served route: reading is the event loop's work)."""
    return await request.body()


def checked_body(op: Operation[Any], raw: bytes, request: Request) -> Any:
    """The body as the operation's model: a ValidationError is answered 422 naming the field, as
    when FastAPI checked it."""
    assert op.body is not None
    parsed = parsed_body(raw, request)
    if not isinstance(parsed, dict):  # a JSON list or value, or not JSON at all (left as bytes)
        why = "Input should be a valid dictionary or object to extract fields from"
        raise InvalidInputError(
            f"body: {why}{not_json_hint(request)}", field="body", errors=[{"field": "body", "message": why}]
        )
    # JSON writes a NUL only as the escape \u0000: a body without one needs no walk to remove them
    # (3.2 s of a 15 MB body's check). Only UTF-8 text: json reads UTF-16 and UTF-32 too, where
    # \u0000 is not those bytes.
    nul_free = json.detect_encoding(raw[:4]) in ("utf-8", "utf-8-sig") and b"\\u0000" not in raw
    return op.body.model_validate(parsed, context={NUL_FREE: True} if nul_free else None)


def refuse_many_values(raw: bytes) -> None:
    """413 for a body of more than ``MAX_JSON_VALUES`` values, before anything parses it (REST and MCP)."""
    if (values := raw.count(b",") + raw.count(b"[") + raw.count(b"{")) > MAX_JSON_VALUES:
        raise PayloadTooLargeError(
            f"the body holds {values:,} JSON values and separators, over this server's limit of "
            f"{MAX_JSON_VALUES:,} (commas in text count too): send it in smaller requests",
            field="body",
            limitValues=MAX_JSON_VALUES,
        )


def parsed_body(raw: bytes, request: Request) -> Any:
    """What FastAPI makes of a body (fastapi.routing, strict content type): JSON, or the bytes; a
    body that does not parse raises as FastAPI raises (tests/surfaces/test_body_checked_off_loop.py)."""
    if not raw:
        raise RequestValidationError([{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
    content_type = request.headers.get("content-type")
    if content_type is None:
        return raw
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    if message.get_content_maintype() != "application" or not (subtype == "json" or subtype.endswith("+json")):
        return raw
    refuse_many_values(raw)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as error:
        problem = {"type": "json_invalid", "loc": ("body", error.pos), "msg": "JSON decode error", "input": {}}
        raise RequestValidationError([{**problem, "ctx": {"error": error.msg}}], body=error.doc) from error
    except Exception as error:  # bytes not in its encoding, nesting past the parser, a too long integer
        raise HTTPException(status_code=400, detail="There was an error parsing the body") from error
