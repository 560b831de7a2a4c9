"""Reading a small scope's words by SQL: the query's words as a tsquery, and each row's lexical
evidence from its stored tsvector.

A scope under ``copy_min_rows`` has no in-memory copy (storage/postgres/search.py). Its lexical
arm and word counts match the words against ``tsv``, PostgreSQL's English stems of the row's
indexed body; its evidence is read the same way, so a recall never stems those bodies in Python
(a writer's long texts of new words made that take seconds: bench/RESULTS.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any


def tsquery(terms: Sequence[str]) -> str:
    """Any of ``terms`` as tsquery text."""
    # Terms are \w+ words; quoting each keeps any that tsquery would parse as syntax literal.
    return " | ".join("'" + t.replace("'", "''").replace("\\", "") + "'" for t in terms)


def tsvector_evidence(
    fetch_all: Callable[[str, Sequence[Any]], list[Any]],
    tenant: str,
    scope_key: str,
    stems: Mapping[str, float],
    rowids: Sequence[int],
    spellings: Mapping[str, Sequence[str]],
) -> dict[int, float]:
    """The share of ``stems``' weight each of ``rowids`` holds: a stem is held when the row's
    tsvector matches one of its ``spellings`` (the query's words that give it). Nothing is read
    when a weighed stem has no spelling: the caller then reads the bodies."""
    weighed = [(stem, weight) for stem, weight in stems.items() if weight > 0]
    total = sum(stems.values())
    if total <= 0 or not rowids or any(not spellings.get(stem) for stem, _ in weighed):
        return {}
    held = ", ".join(["(m.tsv @@ to_tsquery('english', %s))"] * len(weighed))
    found = fetch_all(
        f"SELECT m.rowid, ARRAY[{held}]::bool[] FROM memories m "
        "WHERE m.tenant = %s AND m.scope_key = %s AND m.rowid = ANY(%s)",
        [*(tsquery(spellings[stem]) for stem, _ in weighed), tenant, scope_key, list(rowids)],
    )
    return {
        int(rowid): sum(weight for (_, weight), hit in zip(weighed, hits, strict=True) if hit) / total
        for rowid, hits in found
    }
