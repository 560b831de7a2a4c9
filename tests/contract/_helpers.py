"""Shared helpers for the contract tests: the published RushDB files and independent oracles.

The oracles here are written from the specifications (ECMAScript, RFC 8259, the contract README),
not from ``engramdb.contract``, so the tests compare two implementations instead of one with
itself.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

# The project's shared data sits beside the repository (../shared), in CI as on a laptop.
SHARED_DIR = Path(__file__).resolve().parents[3] / "shared"
CONTRACT_DIR = Path(os.environ.get("ENGRAM_CONTRACT_DIR", SHARED_DIR / "contract"))
SCHEMA_PATH = CONTRACT_DIR / "agent-memory-event.v1.schema.json"
FIXTURE_PATH = CONTRACT_DIR / "conformance.v1.json"

SCOPE_FIELDS = ("agentId", "profileId", "privacyScope", "participantScopeHash", "sandboxEligible")

# ECMAScript 2024 §12.2 WhiteSpace and §12.3 LineTerminator, the set String.prototype.trim strips.
# Spelled out by name so it is independent of the implementation under test.
JS_WHITESPACE = frozenset(
    [
        "\u0009",  # CHARACTER TABULATION <TAB>
        "\u000b",  # LINE TABULATION <VT>
        "\u000c",  # FORM FEED <FF>
        "\ufeff",  # ZERO WIDTH NO-BREAK SPACE <ZWNBSP>
        # <USP>: every code point of general category Zs
        "\u0020",
        "\u00a0",
        "\u1680",
        *(chr(c) for c in range(0x2000, 0x200B)),
        "\u202f",
        "\u205f",
        "\u3000",
        # LineTerminator
        "\u000a",  # LF
        "\u000d",  # CR
        "\u2028",  # LINE SEPARATOR
        "\u2029",  # PARAGRAPH SEPARATOR
    ]
)


@cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@cache
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE_PATH.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@cache
def validator() -> Draft202012Validator:
    return Draft202012Validator(schema(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def base_episode() -> dict[str, Any]:
    """The fixture's episode as a complete contract event (a fresh dict each call)."""
    data = fixture()
    return {
        **data["episodeInput"],
        "schemaVersion": 1,
        "eventType": "episode",
        "eventId": data["expectedEventId"],
    }


# factId of BASE_FACT, computed with an independent Node.js stableStringify written from the
# README (`Object.keys(...).sort()`, JSON.stringify per value, SHA-256 hex of the UTF-8 bytes).
# The same Node code reproduces the fixture's expectedEventId.
BASE_FACT_ID = "cf802fa74ce0116dea64e93e4c9f836a674ba1082e4a4dd08fb1a7846e768133"


def base_fact() -> dict[str, Any]:
    """A hand-built valid contract fact about the fixture's episode (a fresh dict each call)."""
    data = fixture()
    episode = data["episodeInput"]
    return {
        "schemaVersion": 1,
        "eventType": "fact",
        "factId": BASE_FACT_ID,
        "runtime": "hermes",
        "agentId": episode["agentId"],
        "profileId": episode["profileId"],
        "privacyScope": "private",
        "participantScopeHash": episode["participantScopeHash"],
        "sandboxEligible": False,
        "text": "The user prefers TypeScript for this service.",
        "kind": "preference",
        "subjectKey": "user:language-preference",
        "confidence": 0.9,
        "active": True,
        "sourceEventId": data["expectedEventId"],
        "validFrom": "2026-08-18T00:00:00Z",
        "visibility": "participant",
        "trustClass": "trusted",
        "provenance": "hermes:memory_tool",
    }


def accepts(model: type[BaseModel], obj: Any) -> bool:
    """True if ``model`` validates ``obj``. Only ValidationError counts as a rejection."""
    try:
        model.model_validate(obj)
    except ValidationError:
        return False
    return True


def schema_errors(obj: Any, kind: str | None = None) -> list[str]:
    """Short messages for ``obj``'s schema errors; for the ``oneOf``, those of ``kind``'s branch."""
    branch = {"episode": 0, "fact": 1}.get(kind or "")
    messages = []
    for error in validator().iter_errors(obj):
        errors = error.context or [error]
        if branch is not None and error.context:
            errors = [e for e in error.context if e.schema_path[0] == branch] or errors
        for e in errors:
            message = e.message if len(e.message) <= 120 else e.message[:117] + "..."
            messages.append(f"{'/'.join(map(str, e.absolute_path))}: {message}")
    return messages


# --- JavaScript semantics, written from the ECMAScript specification -------------------------


def js_number_to_string(x: float) -> str:
    """``JSON.stringify`` of a Number (ECMAScript Number::toString, radix 10).

    Python's ``repr`` gives the shortest round-tripping digits, which is what the spec's
    "k as small as possible" asks for; the layout rules below are the spec's steps 6-12.
    """
    if math.isnan(x) or math.isinf(x):
        return "null"
    if x == 0:
        return "0"  # both +0 and -0
    if x < 0:
        return "-" + js_number_to_string(-x)
    _, digit_tuple, exponent = Decimal(repr(x)).as_tuple()
    assert isinstance(exponent, int)
    raw = "".join(map(str, digit_tuple))
    digits = raw.rstrip("0")
    exponent += len(raw) - len(digits)
    digits = digits.lstrip("0")
    k = len(digits)
    n = exponent + k  # value = 0.d1..dk * 10**n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def js_quote(value: str) -> str:
    """``JSON.stringify`` of a string (ECMAScript QuoteJSONString, well-formed since ES2019)."""
    out = ['"']
    for ch in value:
        cp = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif cp < 0x20 or 0xD800 <= cp <= 0xDFFF:
            out.append(f"\\u{cp:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def utf16_units(value: str) -> list[int]:
    """The UTF-16 code units of ``value``, computed arithmetically."""
    units: list[int] = []
    for ch in value:
        cp = ord(ch)
        if cp > 0xFFFF:
            cp -= 0x10000
            units += [0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)]
        else:
            units.append(cp)
    return units


def stable_stringify(value: Any) -> str:
    """An independent canonical JSON, as RushDB's ``stableStringify`` is described."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number_to_string(value)
    if isinstance(value, str):
        return js_quote(value)
    if isinstance(value, Mapping):
        keys = sorted(value, key=utf16_units)
        return "{" + ",".join(f"{js_quote(k)}:{stable_stringify(value[k])}" for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ",".join(stable_stringify(v) for v in value) + "]"
    raise TypeError(type(value).__name__)


def js_trim(value: str) -> str:
    """``String.prototype.trim``, a character at a time from each end."""
    start, end = 0, len(value)
    while start < end and value[start] in JS_WHITESPACE:
        start += 1
    while end > start and value[end - 1] in JS_WHITESPACE:
        end -= 1
    return value[start:end]


def strictly_equal(a: Any, b: Any) -> bool:
    """Structural equality that tells ``True`` from ``1`` and ``1`` from ``1.0``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strictly_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strictly_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def reversed_order(value: Any) -> Any:
    """``value`` with every dict rebuilt in reverse insertion order, at every level."""
    if isinstance(value, dict):
        return {k: reversed_order(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_order(v) for v in value]
    return value
