"""A fact's history (its supersession chain: every version linked to it by supersedes or superseded-by,
closed over, within its scope), read on either backend as its links first, then the rows wanted.

The links (``VersionLink``: ids, slot and times, no text) are enough to find the chain and order it: a
page of a long history reads the whole chain's links and the page's rows only. A slot holding several of
its versions has its linked versions read at once, and every id found is asked in one round
(``walk_history``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from engramdb.storage.columns import MEMORY_COLUMNS, memory_record
from engramdb.storage.knowledge.sql import Dialect
from engramdb.storage.rows import MemoryRecord, VersionLink

Fetch = Callable[[str, Sequence[Any]], list[Any]]
LINK_COLUMNS = (
    "m.rowid, m.memory_id, m.supersedes_id, m.superseded_by_id, m.subject_key, m.kind, m.valid_from, m.recorded_at"
)
_CHUNK = 500  # rowids a read of rows names at once
Slot = tuple[str, str]  # a subject and a kind
SLOT_AFTER = 3  # versions of a history found in one slot before that slot's linked versions are read at once


def history_links(fetch: Fetch, d: Dialect, scope_key: str, memory_id: str) -> list[VersionLink]:
    """The links of every version of the fact's history, oldest first ([] for no such fact)."""
    m = d.mark
    owner, owned = d.owned("m")
    facts = f"SELECT {LINK_COLUMNS} FROM memories m WHERE {owner}m.scope_key = {m} AND m.source = 'MEMORY_FACT' AND "

    def linked(ids: list[str], unknown: list[str], read: list[Slot]) -> list[VersionLink]:
        # The slots read already are left out of the links to ``ids``: their linked versions are known (a
        # long slot's every id is asked once, and would bring the whole slot back).
        same = "IS NOT DISTINCT FROM" if d.tenant is not None else "IS"  # a fact with no slot is outside every one
        outside = "".join([f" AND NOT (m.subject_key {same} {m} AND m.kind {same} {m})"] * len(read))
        apart = [value for pair in read for value in pair]
        if d.tenant is not None:  # PostgreSQL
            links = f"(m.supersedes_id = ANY(%s) OR m.superseded_by_id = ANY(%s)){outside}"
            sql = f"{facts}(m.memory_id = ANY(%s) OR ({links}))"
            return [VersionLink(*r) for r in fetch(sql, [*owned, scope_key, unknown, ids, ids, *apart])]
        # One lookup of each id in each link's index (an OR of them read the scope's facts).
        named = "IN (SELECT value FROM json_each(?))"
        sql = " UNION ".join(
            [
                f"{facts}m.memory_id {named}",
                *(f"{facts}m.{c} {named}{outside}" for c in ("supersedes_id", "superseded_by_id")),
            ]
        )
        params = [scope_key, json.dumps(unknown), *([scope_key, json.dumps(ids), *apart] * 2)]
        return [VersionLink(*r) for r in fetch(sql, params)]

    def slot(subject_key: str, kind: str) -> list[VersionLink]:
        linked_only = "(COALESCE(m.supersedes_id, '') <> '' OR COALESCE(m.superseded_by_id, '') <> '')"
        sql = f"{facts}m.subject_key = {m} AND m.kind = {m} AND {linked_only}"
        return [VersionLink(*r) for r in fetch(sql, [*owned, scope_key, subject_key, kind])]

    return walk_history(memory_id, linked, slot)


def history_rows(fetch: Fetch, d: Dialect, scope_key: str, memory_id: str) -> list[MemoryRecord]:
    """Every version of the fact's history as stored, oldest first."""
    return version_rows(fetch, d, scope_key, history_links(fetch, d, scope_key, memory_id))


def version_rows(fetch: Fetch, d: Dialect, scope_key: str, links: Sequence[VersionLink]) -> list[MemoryRecord]:
    """The rows of ``links``, in their order; one gone since is left out. A row is read by its rowid in
    the scope's facts and kept only under the id its link named: SQLite gives an erased row's rowid to
    the next row written (another scope's, between reading the links and the rows)."""
    owner, owned = d.owned("m")
    rows: dict[int, MemoryRecord] = {}
    for start in range(0, len(links), _CHUNK):
        chunk = [link.rowid for link in links[start : start + _CHUNK]]
        found = fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {owner}m.scope_key = {d.mark} "
            f"AND m.source = 'MEMORY_FACT' AND m.rowid IN ({d.marks(len(chunk))})",
            [*owned, scope_key, *chunk],
        )
        rows.update((r[0], memory_record(r)) for r in found)
    return [rows[link.rowid] for link in links if link.rowid in rows and rows[link.rowid].memory_id == link.memory_id]


def walk_history(
    memory_id: str,
    linked: Callable[[list[str], list[str], list[Slot]], list[VersionLink]],
    slot: Callable[[str, str], list[VersionLink]],
) -> list[VersionLink]:
    """Follow supersedes / superseded-by links both ways from one fact; oldest version first.

    ``linked(ids, unknown, read)`` returns the facts with an id of ``unknown`` and those linking to one
    of ``ids`` outside the slots ``read``; ``slot(subject, kind)`` every version of a slot with a link.
    A read of the links of the ids found last goes one version further a round: a slot corrected every
    turn took a round a version (5.8 s for 2,000 on PostgreSQL). So once ``SLOT_AFTER`` versions are
    found in one slot, its linked versions are read at once, their links followed here, and every id
    found is asked in the next round (a link from another slot, or to a fact elsewhere, is found there).
    A history of a few versions reads no slot (a list kind may hold thousands of values, none linked).
    """
    found: dict[str, VersionLink] = {}
    by_link: dict[str, list[VersionLink]] = {}  # every row read, under each id it names
    per_slot: dict[Slot, int] = {}
    slots_read: list[Slot] = []
    ids, asked = {memory_id}, set[str]()

    def absorb(rows: list[VersionLink]) -> list[str]:
        """Keep ``rows`` under the ids they name; return those ids already in the history."""
        for row in rows:
            for link in _links(row):
                by_link.setdefault(link, []).append(row)
        return [link for row in rows for link in _links(row) if link in ids]

    while ids - asked:
        frontier = list(ids - asked)
        asked |= set(frontier)
        unknown = [i for i in frontier if i not in found]  # a row with no link of its own is found by its id
        todo = absorb(linked(frontier, unknown, list(slots_read))) + frontier
        while todo:  # the links among the rows read so far
            for row in by_link.get(todo.pop(), ()):
                if row.memory_id in found:
                    continue
                found[row.memory_id] = row
                new = _links(row) - ids
                ids |= new
                todo += new
                if row.subject_key is None or row.kind is None:
                    continue
                key = (row.subject_key, row.kind)
                per_slot[key] = per_slot.get(key, 0) + 1
                if per_slot[key] == SLOT_AFTER and key not in slots_read:
                    slots_read.append(key)
                    todo += absorb(slot(*key))
    return sorted(found.values(), key=lambda r: (r.valid_from or "", r.recorded_at, r.rowid))


def _links(row: VersionLink) -> set[str]:
    """The ids a version names: its own and the versions it replaced and that replaced it (an empty link
    names nothing)."""
    return {i for i in (row.memory_id, row.supersedes_id, row.superseded_by_id) if i}
