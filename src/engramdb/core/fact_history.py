"""A page of a fact's history: its versions in the history's order, from a cursor.

A slot written every turn (a "current task") holds thousands of versions, and one answer holding
all of them grew with every turn. A page is cut from the whole history's links (ids and times, read
in a few statements: storage/history_walk.py), and only the page's rows are read. The cursor names
the version the page ended with (its id, valid time and record time) and the order it was read in:
a version written between two pages after the page's end in that order comes on a later page, and
none repeats (one backdated before the page's end is not listed: keyset paging reads on, it does
not go back). Were the cursor's version erased
meanwhile, the next page starts after its times. It holds no row number: those count every scope's
writes (and on PostgreSQL every tenant's).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Protocol, TypeVar

from engramdb.errors import InvalidInputError

Position = tuple[str, str]  # valid time, record time: the history's order but for ties


class Version(Protocol):
    """What a page is cut by: a version's id and times (a stored row, or its links)."""

    @property
    def memory_id(self) -> str: ...
    @property
    def valid_from(self) -> str | None: ...
    @property
    def recorded_at(self) -> str: ...


V = TypeVar("V", bound=Version)
_ORDERS = {False: "old", True: "new"}  # the order a page was read in: oldest or newest first


def position(record: Version) -> Position:
    """Where a version stands in its history (``storage.history_walk.walk_history`` orders by it, then by row)."""
    return (record.valid_from or "", record.recorded_at)


def page_of(versions: Sequence[V], cursor: str | None, limit: int, *, newest_first: bool) -> tuple[list[V], str | None]:
    """The page after ``cursor`` of ``versions`` (oldest first), and the next page's cursor."""
    ordered = list(reversed(versions)) if newest_first else list(versions)
    after = _decode(cursor, newest_first)
    if after is not None:
        at, fact_id = after
        ids = [v.memory_id for v in ordered]
        if fact_id in ids:
            ordered = ordered[ids.index(fact_id) + 1 :]
        else:  # erased since: what follows its times
            ordered = [v for v in ordered if (position(v) < at if newest_first else position(v) > at)]
    page = ordered[:limit]
    return page, (_encode(page[-1], newest_first) if len(ordered) > limit else None)


def _encode(last: Version, newest_first: bool) -> str:
    parts = [*position(last), last.memory_id, _ORDERS[newest_first]]
    return base64.urlsafe_b64encode(json.dumps(parts, separators=(",", ":")).encode()).decode()


def _decode(cursor: str | None, newest_first: bool) -> tuple[Position, str] | None:
    if cursor is None:
        return None
    try:
        parts = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, binascii.Error):
        parts = None
    strings = isinstance(parts, list) and len(parts) == 4 and all(isinstance(p, str) and len(p) <= 64 for p in parts)
    if not strings or parts[3] not in _ORDERS.values():
        raise InvalidInputError("cursor is not one this server gave (pass nextCursor as it came)", field="cursor")
    valid, recorded, fact_id, order = parts
    if order != _ORDERS[newest_first]:  # read on the other way, it would go back over what was listed
        wanted = "true" if order == _ORDERS[True] else "false"
        raise InvalidInputError(f"cursor is of pages read with newestFirst={wanted}: ask so", field="cursor")
    return (valid, recorded), fact_id
