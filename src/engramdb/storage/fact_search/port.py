"""What core and the stores exchange to search structured facts (``POST /v1/facts/search``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from engramdb.storage.rows import Candidate, Vector

ConditionOp = Literal["eq", "ne", "gt", "gte", "lt", "lte", "type", "length"]
JsonType = Literal["object", "array", "string", "number", "boolean", "null"]
SCOPE_COLUMNS = ("agent_id", "profile_id", "privacy_scope", "participant_scope_hash", "sandbox_eligible")


@dataclass(frozen=True)
class ScopeMatch:
    """The scopes a read covers: the one whose digest is ``scope_key``, or every scope whose
    columns hold the values in ``columns`` (the fields a request left open take any value)."""

    scope_key: str | None = None
    columns: tuple[tuple[str, str | bool], ...] = ()


@dataclass(frozen=True)
class FieldCondition:
    """A condition on the JSON object a fact's text holds, at ``path`` (object keys and array
    indexes from the root). ``eq``: the same JSON value (numbers by value; ``null`` also matches
    a missing one); ``ne``: not ``eq``; ``gt`` ``gte`` ``lt`` ``lte``: a number, compared with
    the number ``value``; ``type``: of that JSON type; ``length``: an array of that length."""

    path: tuple[str | int, ...]
    op: ConditionOp
    value: Any


@dataclass(frozen=True)
class Sources:
    """Which facts a search keeps by their sourceEventId: only those of ``only`` (when given), and
    none of ``without``."""

    only: tuple[str, ...] | None = None
    without: tuple[str, ...] = ()


ANY_SOURCE = Sources()


class FactSearchReads(Protocol):
    """The reads of a structured fact search."""

    def current_facts(
        self, scopes: ScopeMatch, *, subject_prefix: str, now: str, sources: Sources, page: tuple[int, int]
    ) -> list[int]:
        """Return the rowids of a page (offset, limit) of the current facts (active, not expired at
        ``now``) of the scopes whose subject starts with ``subject_prefix`` and whose source
        ``sources`` keeps, newest first (record time, then write order)."""
        ...

    def grouped_facts(
        self, scopes: ScopeMatch, *, subject_prefix: str, now: str, sources: Sources, model: str | None = None
    ) -> dict[str, np.ndarray]:
        """Return every fact ``current_facts`` would page through, as each scope's rowids (in no order;
        read-only). ``model``: the search ranks them next, in the scope copies of that model's
        vectors (``rank_facts``), which may then keep them (one scope named: until a row changes)."""
        ...

    def count_current_facts(self, scopes: ScopeMatch, *, subject_prefix: str, now: str, sources: Sources) -> int:
        """Return how many facts ``current_facts`` would page through."""
        ...

    def facts_meeting(
        self, rowids: Sequence[int] | np.ndarray, where: Sequence[FieldCondition], copy: tuple[str, str] | None = None
    ) -> set[int]:
        """Return those of ``rowids`` whose text meets every condition. ``copy`` (scope key, model):
        the rows are of that scope, whose copy of the model's vectors may then read them (and keep
        the values at the conditions' paths for the next search)."""
        ...

    def facts_newest_first(self, rowids: Sequence[int], page: tuple[int, int]) -> list[int]:
        """Return a page (offset, limit) of ``rowids`` in ``current_facts``'s order, newest first."""
        ...

    def fact_subjects(
        self, scopes: ScopeMatch, *, subject_prefix: str, after: str | None, now: str, limit: int
    ) -> list[str]:
        """Return the distinct subjects of current facts that start with ``subject_prefix``, in
        code point order, those after ``after`` only, at most ``limit``."""
        ...

    def rank_facts(
        self, scope_key: str, rowids: np.ndarray, query: Vector, words: Sequence[str], limit: int, model: str
    ) -> list[Candidate]:
        """Return the ``limit`` best of ``rowids`` (rows of the scope) by relevance to the query
        (storage/scope_copy.py: ``ScopeCopy.rank``), comparing vectors of ``model`` only."""
        ...
