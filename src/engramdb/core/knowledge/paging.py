"""How the knowledge plane's reads are paged: cursors, and the bytes one answer may carry.

A cursor is what the last page ended on, so a page costs its own size however many came before
it (an offset would read and skip them all).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engramdb.core.sealed import Sealer
from engramdb.errors import InvalidInputError
from engramdb.storage.knowledge.port import Edge, EdgeKey, KnowledgeReads, RecordRow

_LAST_ROWID = 2**63 - 1
# The properties one answer carries (records, versions). Pages were bounded by count alone: 48 records
# of 3.8 MB made one search answer 184 MB in 2 s, and two clients looping on it took another tenant's
# recall p90 from 14 to 948 ms (session 48). A page stops before the record that would pass this.
ANSWER_BYTES = 4_000_000


@dataclass(frozen=True, order=True)
class PageKey:
    """A relationship's place in a node's list: record time, then the knowledge plane's edges
    (rank 0, by rowid) before a model's links (rank 1, by link id) made at the same time."""

    created_at: str
    rank: int
    tiebreak: str

    @classmethod
    def of_edge(cls, edge: Edge) -> PageKey:
        return cls(edge.created_at, 0, str(edge.rowid).zfill(20))  # zero-padded: compares as a number

    def edge_key(self) -> EdgeKey:
        """Where the edges after this key start: past a model's link, every edge made at its time."""
        return EdgeKey(self.created_at, int(self.tiebreak) if self.rank == 0 else _LAST_ROWID)

    def encode(self, sealer: Sealer) -> str:
        """The cursor: an edge's row sealed (core/sealed.py), a link's id as it is."""
        tiebreak = sealer.seal(int(self.tiebreak)) if self.rank == 0 else self.tiebreak
        return f"{self.created_at}|{self.rank}|{tiebreak}"

    @classmethod
    def decode(cls, cursor: str, sealer: Sealer) -> PageKey:
        parts = cursor.rsplit("|", 2)
        if len(parts) == 3 and parts[0] and parts[1] in ("0", "1") and parts[2]:
            if parts[1] == "1":
                return cls(parts[0], 1, parts[2])
            rowid = sealer.unseal(parts[2])
            if rowid is not None:
                return cls(parts[0], 0, str(rowid).zfill(20))
        raise InvalidInputError("cursor: not a nextCursor this list answered", field="cursor")


def version_cursor(cursor: str | None) -> int:
    """The version a page of a record's history starts after (0: from the first)."""
    if cursor is None:
        return 0
    if cursor.isascii() and cursor.isdigit() and int(cursor) < 2**31:
        return int(cursor)
    raise InvalidInputError("cursor: not a nextCursor this history answered", field="cursor")


def fitting(sizes: Sequence[tuple[int, int]], budget: int = ANSWER_BYTES) -> tuple[list[int], bool]:
    """The leading keys of ``(key, bytes)`` whose bytes fit in ``budget`` together (the first always
    does: a page is never empty), and whether any were left out."""
    keys: list[int] = []
    used = 0
    for key, size in sizes:
        if keys and used + size > budget:
            return keys, True
        keys.append(key)
        used += size
    return keys, False


def rows_that_fit(
    reads: KnowledgeReads, scope_key: str, sizes: Sequence[tuple[int, int]]
) -> tuple[list[RecordRow], bool]:
    """The leading records of ``(rowid, bytes)`` that fit one answer, read and kept in that order (one
    deleted since is left out), and whether any were left out for room."""
    rowids, cut = fitting(sizes)
    rows = reads.record_rows(scope_key, rowids)
    return [rows[rowid] for rowid in rowids if rowid in rows], cut
