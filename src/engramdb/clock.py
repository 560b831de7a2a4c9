"""UTC timestamps in one canonical text form: ``YYYY-MM-DDTHH:MM:SS.ffffffZ``.

Fixed width and UTC, so text order is time order in every backend.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

CANONICAL = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")


def utc_now() -> datetime:
    """Return the current time, timezone-aware UTC."""
    return datetime.now(UTC)


def to_text(moment: datetime) -> str:
    """Return ``moment`` in canonical text form (naive datetimes are taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    # Fixed width (strftime's %Y drops the zeros of years before 1000), so stored times sort as text.
    return f"{moment.year:04d}-" + moment.strftime("%m-%dT%H:%M:%S.%fZ")


def is_canonical(text: object) -> bool:
    """Whether ``text`` is a time in canonical text form (a cursor's time is checked by it)."""
    return isinstance(text, str) and CANONICAL.fullmatch(text) is not None


def now_text() -> str:
    """Return the current time in canonical text form."""
    return to_text(utc_now())


def parse(text: str) -> datetime:
    """Parse an RFC 3339 date-time (``Z`` or an offset) into aware UTC."""
    moment = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def normalize(text: str) -> str:
    """Return an RFC 3339 date-time in canonical text form."""
    return to_text(parse(text))


def later(seconds: float) -> str:
    """Return the canonical text of now + ``seconds``."""
    return to_text(utc_now() + timedelta(seconds=seconds))
