"""Signing a delivery, Stripe's way: ``EngramDB-Signature: t=<unix time>,v1=<hex HMAC-SHA256>``.

The MAC covers ``f"{t}.{body}"``: the time is signed with the body, so a receiver that refuses old
times refuses a replayed delivery, and the body carries the delivery's id, so a receiver that
remembers ids refuses a replay inside that window too. ``v1`` names the scheme, so a later one
can be sent beside it. Chosen over a bare MAC of the body (no replay protection) and over
Standard Webhooks' three headers (the same idea, base64): receivers written for Stripe's scheme
work unchanged, and the ten lines in docs/operations.md need only the standard library.
"""

from __future__ import annotations

import hashlib
import hmac


def signature(secret: str, body: bytes, timestamp: int) -> str:
    """Return the signature header's value for ``body`` sent at ``timestamp`` (unix seconds)."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"
