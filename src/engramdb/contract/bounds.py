"""Text bounds. The contract sets no maximum length; the server does, and says so.

NUL characters are stripped (SQLite and PostgreSQL text cannot hold them safely, and RushDB's
adapter strips them too) before the id is computed. Anything longer than its cap is refused with
a 422 that names the field, never silently truncated: a truncated memory would hash differently
from what the client sent and change meaning without anyone noticing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from engramdb.errors import InvalidInputError

# Caps in characters (Unicode code points), by wire field name.
TEXT_CAPS: Mapping[str, int] = {
    "userText": 16_000,
    "assistantText": 16_000,
    "summary": 4_000,
    "text": 4_000,
    "subjectKey": 256,
    "kind": 64,
    "agentId": 128,
    "profileId": 128,
    "externalSessionId": 256,
    "sourceEventId": 256,
    "originClass": 128,
    "provenance": 512,
    "supersedesFactId": 64,
}
MAX_SAFE_INTEGER = 2**53 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
QUERY_CAP = 4_000  # recall query, as in RushDB's reference client
REASON_CAP = 1_000


def strip_nul(value: Any) -> Any:
    """Return ``value`` with NUL characters removed from every string inside it.

    A Python walk, not json's encoder (C) asked first whether a NUL is there: the encoder holds
    Python's lock for all of a large body (0.8 s for 7 million values), where the walk lets the
    server's event loop run beside it (a body's model is checked in a worker thread: api/routes.py).
    """
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, Mapping):
        return {k: strip_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [strip_nul(v) if isinstance(v, (str, Mapping, list)) else v for v in value]
    return value


def replace_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate inside its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return value if value.isascii() else _SURROGATE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {replace_lone_surrogates(k): replace_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_lone_surrogates(v) for v in value]
    return value


def has_lone_surrogate(value: Any) -> bool:
    """Whether a string inside ``value`` holds a lone surrogate (an unpaired ``\\ud800``-``\\udfff``
    escape): JSON lets one through, UTF-8 cannot encode it, so no store could keep it."""
    if isinstance(value, str):
        return not value.isascii() and _SURROGATE.search(value) is not None
    if isinstance(value, Mapping):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(has_lone_surrogate(v) for v in value)
    return False


LONE_SURROGATE = "holds a lone surrogate (an unpaired \\ud800-\\udfff escape, not text UTF-8 can carry)"


def clean_parameter(name: str, value: str) -> str:
    """A path parameter as the stores can take it, on every surface: a NUL (it names nothing stored)
    or a lone surrogate is refused naming the parameter."""
    if has_lone_surrogate(value):
        raise InvalidInputError(f"{name} {LONE_SURROGATE}", field=name)
    if "\x00" in value:
        raise InvalidInputError(f"{name} holds a NUL character", field=name)
    return value


def check_unicode(body: Mapping[str, Any]) -> None:
    """Refuse, naming the field, a string holding a lone surrogate: JSON can escape one
    (``"\\ud800"``), but it is no Unicode text and no store can encode it."""
    for field, value in body.items():
        if _has_surrogate(value):
            raise InvalidInputError(
                f"{field} holds a lone surrogate (\\ud800-\\udfff), which is not Unicode text", field=field
            )


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, Mapping):
        return any(_has_surrogate(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def check_caps(body: Mapping[str, Any]) -> None:
    """Raise InvalidInputError naming the first field longer than its cap."""
    for field, cap in TEXT_CAPS.items():
        value = body.get(field)
        if isinstance(value, str) and len(value) > cap:
            raise InvalidInputError(
                f"{field} is {len(value)} characters; the limit is {cap}",
                field=field,
                limit=cap,
            )


def check_safe_integer(body: Mapping[str, Any], field: str) -> None:
    """Refuse integers JavaScript cannot hold exactly (the id would differ from the reference)."""
    value = body.get(field)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
        raise InvalidInputError(
            f"{field} is above 2**53 - 1, which JavaScript cannot represent exactly",
            field=field,
            limit=MAX_SAFE_INTEGER,
        )


def check_text(field: str, value: str, cap: int) -> str:
    """Return ``value`` without NULs, or raise InvalidInputError if it is over ``cap``."""
    value = value.replace("\x00", "")
    if len(value) > cap:
        raise InvalidInputError(f"{field} is {len(value)} characters; the limit is {cap}", field=field, limit=cap)
    return value
