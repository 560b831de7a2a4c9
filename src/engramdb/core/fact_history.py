"""A page of a fact's history: its versions in the history's order, from a cursor.

A slot written every turn (a "current task") holds thousands of versions, and one answer holding
all of them grew with every turn. A page is cut from the whole history, read as before (the store
follows the links in one statement on SQLite, a statement a step on PostgreSQL), so a page bounds
what is sent, not what is read. The cursor names the version the page ended with (its id, valid
time and record time), so a version written between two pages neither repeats nor hides another;
were that version erased meanwhile, the next page starts after its times. It holds no row number:
those count every scope's writes (and on PostgreSQL every tenant's).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence

from engramdb.errors import InvalidInputError
from engramdb.storage.port import MemoryRecord

Position = tuple[str, str]  # valid time, record time: the history's order but for ties


def position(record: MemoryRecord) -> Position:
    """Where a version stands in its history (``storage.common.oldest_first`` orders by it, then by row)."""
    return (record.valid_from or "", record.recorded_at)


def page_of(
    versions: Sequence[MemoryRecord], cursor: str | None, limit: int, *, newest_first: bool
) -> tuple[list[MemoryRecord], str | None]:
    """The page after ``cursor`` of ``versions`` (oldest first), and the next page's cursor."""
    ordered = list(reversed(versions)) if newest_first else list(versions)
    after = _decode(cursor)
    if after is not None:
        at, fact_id = after
        ids = [v.memory_id for v in ordered]
        if fact_id in ids:
            ordered = ordered[ids.index(fact_id) + 1 :]
        else:  # erased since: what follows its times
            ordered = [v for v in ordered if (position(v) < at if newest_first else position(v) > at)]
    page = ordered[:limit]
    return page, (_encode(page[-1]) if len(ordered) > limit else None)


def _encode(last: MemoryRecord) -> str:
    return base64.urlsafe_b64encode(
        json.dumps([*position(last), last.memory_id], separators=(",", ":")).encode()
    ).decode()


def _decode(cursor: str | None) -> tuple[Position, str] | None:
    if cursor is None:
        return None
    try:
        valid, recorded, fact_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        if all(isinstance(part, str) and len(part) <= 64 for part in (valid, recorded, fact_id)):
            return (valid, recorded), fact_id
    except (ValueError, TypeError, binascii.Error):
        pass
    raise InvalidInputError("cursor is not one this server gave (pass nextCursor as it came)", field="cursor")
