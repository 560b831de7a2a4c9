"""Canonical JSON, content-derived ids and scope hashing, byte-compatible with RushDB v1.

Pure functions, no I/O. Canonical JSON follows the reference (`stableStringify`): keys sorted
by UTF-16 code units at every level, no whitespace, ``None`` kept, strings written as
JavaScript's ``JSON.stringify`` writes them (non-ASCII unescaped), numbers as JavaScript
prints them, hashed as UTF-8 with SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

SCHEMA_VERSION = 1

# JavaScript's String.prototype.trim: WhiteSpace + LineTerminator. Python's str.strip() also
# strips U+001C..U+001F and U+0085 and does not strip U+FEFF, so it cannot be used.
_JS_WHITESPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_trim(value: str) -> str:
    """Return ``value`` trimmed exactly as JavaScript's ``trim()`` trims."""
    return value.strip(_JS_WHITESPACE)


def _js_number(value: int | float) -> str:
    """Return ``value`` as JavaScript's Number::toString writes it (shortest round-trip digits)."""
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return "null"  # JSON.stringify(NaN) === "null"
    if value == 0:
        return "0"  # also for -0
    if value < 0:
        return "-" + _js_number(-value)
    _, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    raw = "".join(map(str, digit_tuple))
    digits = raw.rstrip("0")
    exponent = int(exponent) + len(raw) - len(digits)
    digits = digits.lstrip("0")
    k, n = len(digits), int(exponent) + len(digits)  # value = 0.digits * 10**n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


# What json.dumps(ensure_ascii=False) calls for a str, without building an encoder per call.
_encode_string = json.encoder.encode_basestring


def _js_string(value: str) -> str:
    # Non-ASCII is left as is, like JSON.stringify; lone surrogates are escaped by
    # JSON.stringify (ES2019) and would not encode as UTF-8 here, so escape them.
    text = _encode_string(value)
    if value.isascii():
        return text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def canonical_json(value: Any) -> str:
    """Return the canonical JSON text of ``value`` (RushDB's ``stableStringify``)."""
    if _plain(value):  # json's C encoder writes it as stableStringify does (most events and audit states)
        text = _plain_json(value)
        if text.isascii() or not _LONE_SURROGATE.search(text):
            return text
    return _canonical(value)


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only dicts with ASCII keys (sorted by code point as by UTF-16 code
    unit), lists, tuples, strings, integers, booleans and None: no float, which JavaScript prints in
    its own way, and no subclass, which json writes by its base type."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is dict:
        return all(type(k) is str and k.isascii() and _plain(v) for k, v in value.items())
    if kind is list or kind is tuple:
        return all(_plain(v) for v in value)
    return False


# Strings as _js_string writes them (the same encode_basestring), keys sorted, no whitespace.
_plain_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode


def _canonical(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return _js_number(value)
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, Mapping):
        items = sorted(value.items(), key=lambda kv: _utf16_key(kv[0]))
        body = ",".join(f"{_js_string(k)}:{_canonical(v)}" for k, v in items)
        return "{" + body + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_canonical(v) for v in value) + "]"
    raise TypeError(f"canonical_json cannot encode {type(value).__name__}")


def sha256_hex(text: str) -> str:
    """Return the lower-hex SHA-256 of the UTF-8 bytes of ``text``."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def is_sha256_hex(value: object) -> bool:
    """Whether ``value`` has the shape ``sha256_hex`` gives (a scope key, a participant hash)."""
    return isinstance(value, str) and re.fullmatch("[0-9a-f]{64}", value) is not None


def event_id(
    *,
    runtime: str,
    agent_id: str,
    profile_id: str,
    external_session_id: str,
    turn_index: int,
    user_text: str,
    assistant_text: str,
    source_event_id: str | None = None,
) -> str:
    """Return the episode ``eventId`` exactly as RushDB's ``episodeEventId`` computes it."""
    return sha256_hex(
        canonical_json(
            {
                "schemaVersion": SCHEMA_VERSION,
                "eventType": "episode",
                "runtime": runtime,
                "agentId": agent_id,
                "profileId": profile_id,
                "externalSessionId": external_session_id,
                "sourceEventId": source_event_id if source_event_id is not None else "",
                "turnIndex": turn_index,
                "userText": user_text,
                "assistantText": assistant_text,
            }
        )
    )


def fact_id(
    *,
    runtime: str,
    agent_id: str,
    profile_id: str,
    participant_scope_hash: str,
    subject_key: str,
    kind: str,
    source_event_id: str,
    text: str,
) -> str:
    """Return the fact ``factId`` exactly as RushDB's ``factEventId`` computes it."""
    return sha256_hex(
        canonical_json(
            {
                "schemaVersion": SCHEMA_VERSION,
                "eventType": "fact",
                "runtime": runtime,
                "agentId": agent_id,
                "profileId": profile_id,
                "participantScopeHash": participant_scope_hash,
                "subjectKey": subject_key,
                "kind": kind,
                "sourceEventId": source_event_id,
                "text": text,
            }
        )
    )


def hash_scope(parts: Iterable[str | None], salt: str = "") -> str:
    """Return RushDB's ``hashScope``: SHA-256 of salt, U+001E, then JS-trimmed parts joined by U+001F."""
    normalized = "\u001f".join(js_trim(p) if p is not None else "" for p in parts)
    return sha256_hex(f"{salt}\u001e{normalized}")
