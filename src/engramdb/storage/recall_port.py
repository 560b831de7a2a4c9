"""What recall reads of a tenant's scope: both arms' candidates, the turns next to a row, the
words' evidence and counts (a part of the storage port, ``TenantStore``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from engramdb.storage.rows import Candidate, CandidateFilter, Vector


class RecallReads(Protocol):
    """The recall arms' reads of one tenant, each within one scope."""

    def text_candidates(
        self, scope_key: str, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> list[Candidate]:
        """Return the lexical arm's top rows (BM25, higher is better) within the scope."""
        ...

    def adjacent(self, scope_key: str, rowids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Return, aligned with ``rowids``, the rowids of the episodes written just before and
        after each one in its session, in this scope (-1: none; also for -1 and for facts)."""
        ...

    def vector_candidates(self, scope_key: str, query: Vector, filt: CandidateFilter, limit: int) -> list[Candidate]:
        """Return the exact cosine top rows within the scope (ready vectors only)."""
        ...

    def candidates(
        self, scope_key: str, query: Vector, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> tuple[list[Candidate], list[Candidate]]:
        """Return both arms' top rows, as ``vector_candidates`` and ``text_candidates`` would
        (a store may read the scope once for both)."""
        ...

    def lexical_apart(self, scope_key: str) -> bool:
        """Whether ``text_candidates`` and ``term_counts`` cost no more apart than within
        ``candidates`` (then recall runs them while the query is embedded, on another thread)."""
        ...

    def word_evidence(
        self, scope_key: str, stems: Mapping[str, float], rowids: Sequence[int], spellings: Mapping[str, Sequence[str]]
    ) -> dict[int, float]:
        """The share of ``stems``' weight each row's indexed body holds, from a copy's index or a search
        column (matching ``spellings``: stem -> query words); rows left out: the caller reads them."""
        ...

    def term_counts(self, scope_key: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """Return the scope's row count and how many of its rows contain each term (may be cached)."""
        ...
