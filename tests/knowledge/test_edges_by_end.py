"""The relationships of a few nodes (an export's hops, a deletion's cascade, entity links) are read
a statement per end, each on its index: one OR of both ends, first by rowid, read every relationship
of the scope (a review: 177 ms for a node of three in a scope of 500,000). SQLite's steps for the
read stay flat as the scope's other relationships grow; the old statement, the control, grows."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from engramdb.config import Settings
from engramdb.storage.knowledge.port import NodeRef
from engramdb.storage.sqlite.store import SQLiteStore
from tests.sqlite_steps import vm_steps

SCOPE = "s" * 64
OURS = 7  # the node whose relationships are read: a record with three


def _old_statement(limit: int) -> tuple[str, list[Any]]:
    return (
        "SELECT rowid FROM relationships WHERE scope_key = ? AND ((source_kind = ? AND source IN (?)) OR "
        f"(target_kind = ? AND target IN (?))) ORDER BY rowid LIMIT {limit}",
        [SCOPE, "RECORD", OURS, "RECORD", OURS],
    )


def _steps(settings: Settings, others: int) -> tuple[int, int, list[int]]:
    """Steps of the store's read and of the old statement with ``others`` relationships beside ours."""
    home = settings.home.parent / f"home-{others}"
    store = SQLiteStore(home)
    try:
        tenant = store.tenant("t1", create=True)
        with sqlite3.connect(tenant.path) as conn:
            rows = [
                (SCOPE, "RELATES", "RECORD", 1000 + i, "RECORD", 2000 + i, "{}", "2026-01-01") for i in range(others)
            ]
            rows += [(SCOPE, t, "RECORD", OURS, "RECORD", 9, "{}", "2026-01-02") for t in ("A", "B")]
            rows += [(SCOPE, "C", "RECORD", 9, "RECORD", OURS, "{}", "2026-01-02")]
            conn.executemany(
                "INSERT INTO relationships (scope_key, type, source_kind, source, target_kind, target, "
                "properties_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        statements: list[tuple[str, Sequence[Any]]] = []
        run = tenant._run

        def taken(sql: str, params: Sequence[Any] = ()) -> Any:
            statements.append((sql, list(params)))
            return run(sql, params)

        tenant._run = taken  # this tenant object alone, for this read
        try:
            found = tenant.edges(SCOPE, [NodeRef("RECORD", OURS)], limit=2001)
        finally:
            tenant._run = run
        return (
            vm_steps(tenant.path, statements),
            vm_steps(tenant.path, [_old_statement(2001)]),
            [e.rowid for e in found],
        )
    finally:
        store.close()


def test_a_nodes_relationships_are_read_by_their_ends_however_many_the_scope_holds(settings: Settings) -> None:
    few, old_few, found_few = _steps(settings, 200)
    many, old_many, found_many = _steps(settings, 4_000)
    assert len(found_few) == len(found_many) == 3  # ours alone, both times
    assert many == few  # flat
    assert old_many > old_few + 3_000  # the control: the old statement passes over the others
