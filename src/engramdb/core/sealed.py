"""Row numbers sealed in cursors.

A page's cursor says where the page ended, and where two rows tie on time that is the row's number.
Row numbers count every scope's writes (on PostgreSQL every tenant's of a schema: one sequence), so
a cursor that showed one let a key count what others wrote between two of its reads. A cursor holds
the number through a keyed permutation of 64-bit numbers instead (a four-round Feistel network over
HMAC-SHA256), keyed by the tenant's secret salt: the server reads it back, and a client sees sixteen
hex digits that say nothing of another cursor's.
"""

from __future__ import annotations

import hashlib
import hmac

_ROUNDS = 4
_HALF = 2**32 - 1
_LIMIT = 2**63  # row numbers are signed 64-bit on both backends
_HEX = frozenset("0123456789abcdef")


class Sealer:
    """Seals and unseals row numbers under one tenant's key."""

    def __init__(self, secret: str) -> None:
        self._key = hmac.new(secret.encode(), b"engramdb: row numbers in cursors", hashlib.sha256).digest()

    def seal(self, number: int) -> str:
        """``number`` (0 <= number < 2**63) as sixteen hex digits."""
        left, right = number >> 32, number & _HALF
        for step in range(_ROUNDS):
            left, right = right, left ^ self._round(step, right)
        return f"{left << 32 | right:016x}"

    def unseal(self, text: str) -> int | None:
        """The number ``text`` seals, or None when it seals none (not sixteen hex digits, or out of range)."""
        if len(text) != 16 or not _HEX.issuperset(text):
            return None
        value = int(text, 16)
        left, right = value >> 32, value & _HALF
        for step in reversed(range(_ROUNDS)):
            left, right = right ^ self._round(step, left), left
        number = left << 32 | right
        return number if number < _LIMIT else None

    def _round(self, step: int, half: int) -> int:
        digest = hmac.new(self._key, bytes([step]) + half.to_bytes(4, "big"), hashlib.sha256).digest()
        return int.from_bytes(digest[:4], "big")
