"""A fact's history, as the walk finds it through the real statements (storage/history_walk.py, SQLite's
here, on a table of its own), is the closure of its links by definition: random link graphs with links
across slots, to missing facts, empty and to themselves, facts without a slot, episodes and other scopes
holding the same ids, for each way the walk may read slots (``SLOT_AFTER`` 1 to 3)."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engramdb.storage import history_walk
from engramdb.storage.columns import MEMORY_COLUMNS
from engramdb.storage.history_walk import history_links
from engramdb.storage.sqlite.transaction import SQLITE

COLUMNS = [c.strip() for c in MEMORY_COLUMNS.split(",")]
IDS = [f"f{i}" for i in range(12)]
link = st.sampled_from([None, None, "", "missing", *IDS])
row = st.fixed_dictionaries(
    {
        "memory_id": st.sampled_from(IDS),
        "scope_key": st.sampled_from(["s1", "s1", "s2"]),
        "source": st.sampled_from(["MEMORY_FACT"] * 9 + ["EPISODE"]),
        "subject_key": st.sampled_from(["u", "v", None]),
        "kind": st.sampled_from(["k0", "k1", "k2", None]),
        "supersedes_id": link,
        "superseded_by_id": link,
        "valid_from": st.sampled_from([None, "2026-01-01", "2026-02-01"]),
    }
)


def _closure(rows: list[dict[str, object]], start: str) -> list[str]:
    """Every fact of scope s1 linked to ``start``, followed both ways (an empty link names nothing)."""
    facts = [r for r in rows if r["scope_key"] == "s1" and r["source"] == "MEMORY_FACT"]

    def names(r: dict[str, object]) -> set[object]:
        return {i for i in (r["memory_id"], r["supersedes_id"], r["superseded_by_id"]) if i}

    ids: set[object] = {start}
    chain: set[object] = set()
    grew = True
    while grew:
        grew = False
        for r in facts:
            if r["memory_id"] not in chain and names(r) & ids:
                chain.add(r["memory_id"])
                ids |= names(r)
                grew = True
    return sorted(str(i) for i in chain)


@pytest.mark.parametrize("slot_after", [1, 2, 3])
@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(rows=st.lists(row, max_size=30, unique_by=lambda r: (r["scope_key"], r["source"], r["memory_id"])))
def test_the_walk_finds_the_closure_of_the_links(slot_after: int, rows: list[dict[str, object]]) -> None:
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE TABLE memories ({MEMORY_COLUMNS})")
    for rowid, r in enumerate(rows, start=1):
        values = {c: None for c in COLUMNS} | r | {"rowid": rowid, "recorded_at": f"r{rowid:04d}"}
        db.execute(
            f"INSERT INTO memories ({MEMORY_COLUMNS}) VALUES ({', '.join('?' * len(COLUMNS))})",
            [values[c] for c in COLUMNS],
        )
    saved, history_walk.SLOT_AFTER = history_walk.SLOT_AFTER, slot_after
    try:
        for start in [*IDS, "missing"]:
            found = history_links(lambda sql, params: db.execute(sql, params).fetchall(), SQLITE, "s1", start)
            assert sorted(v.memory_id for v in found) == _closure(rows, start), start
    finally:
        history_walk.SLOT_AFTER = saved
