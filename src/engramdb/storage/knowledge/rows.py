"""What the knowledge plane's statements share on either backend: how a statement is run, and
how its rows become records and edges.

``Run`` executes one statement and returns its rows (none for a statement without them); every
write uses ``RETURNING``, which SQLite (3.35+) and PostgreSQL both have.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from engramdb.storage.knowledge.port import Edge, NodeRef, RecordRow
from engramdb.storage.knowledge.sql import Compiled, Dialect

Run = Callable[[str, Sequence[Any]], list[Any]]
RunMany = Callable[[str, Sequence[Sequence[Any]]], None]  # one statement over many rows of parameters
T = TypeVar("T")
EDGE_COLUMNS = "rowid, type, source_kind, source, target_kind, target, properties_json, created_at"


def record_row(row: Sequence[Any]) -> RecordRow:
    return RecordRow(*row)


def edge(row: Sequence[Any]) -> Edge:
    return Edge(row[0], row[1], NodeRef(row[2], row[3]), NodeRef(row[4], row[5]), row[6], row[7])


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def in_clause(column: str, values: Sequence[Any], d: Dialect) -> Compiled:
    return Compiled(f"{column} IN ({d.marks(len(values))})", list(values))
