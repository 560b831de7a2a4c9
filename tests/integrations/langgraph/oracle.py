"""The reference a differential test holds ``EngramStore`` to: LangGraph's own ``InMemoryStore``.

``Twin`` applies every operation to both stores and says what ``EngramStore`` must answer, from
what ``InMemoryStore`` answers. LangGraph's code decides everything but three things it leaves
to each store, where ``InMemoryStore`` differs from LangGraph's persistent stores and EngramDB
does as those do (docs/integrations.md has the table):

- the order of a search without a query: ``InMemoryStore`` keeps insertion order, PostgresStore
  and SqliteStore the newest update first. The expected page is ``InMemoryStore``'s whole answer
  (every match, its filter) in the order of the last put of each item, then sliced;
- the order of a search with a query: each store ranks by its own relevance. The expected answer
  is ``InMemoryStore``'s membership (given the same embedding function: every matching item,
  ``index=False`` items unscored), with the ranking itself checked for consistency (scores fall,
  unscored last, every page the slice of the whole ranking) rather than compared;
- ``list_namespaces``: ``InMemoryStore`` keeps listing a namespace whose items were all deleted,
  and one a ``get`` of a missing key touched; EngramDB lists namespaces that hold items, as
  PostgresStore does. The oracle forgets its empty namespaces before it is asked.

And one it gets wrong, as PostgresStore does: an item put again with ``index=False`` keeps the
vectors of the value it replaced, so a query still ranks it, by a value it no longer holds.
EngramStore ranks no version put with ``index=False``; the oracle drops such an item's vectors.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langgraph.store.base import GetOp, Item, ListNamespacesOp, Op, PutOp, SearchItem, SearchOp
from langgraph.store.memory import InMemoryStore

from engramdb.core.embedding import HashingEmbedder
from engramdb.integrations.langgraph import EngramStore

EVERYTHING = 10**9
Row = tuple[tuple[str, ...], str, Any]  # namespace, key, value


def reference_store() -> InMemoryStore:
    """``InMemoryStore`` ranking with the suite server's own embedding function."""
    embedder = HashingEmbedder()
    return InMemoryStore(
        index={"dims": embedder.dimension, "embed": lambda texts: embedder.embed(list(texts)).tolist()}
    )


def rows(found: Sequence[Item]) -> list[Row]:
    return [(tuple(i.namespace), i.key, i.value) for i in found]


@dataclass(repr=False)
class Twin:
    """``EngramStore`` beside ``InMemoryStore``, with the order of their puts."""

    ours: EngramStore
    settle: Callable[[], object]  # make every vector (the ranking then holds still)
    oracle: InMemoryStore = field(default_factory=reference_store)
    last_put: dict[tuple[tuple[str, ...], str], int] = field(default_factory=dict)
    _clock: itertools.count[int] = field(default_factory=itertools.count)

    def __repr__(self) -> str:
        return f"Twin({len(self.last_put)} items)"  # a failing example names the twin, not its thousands of items

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # hypothesis prints a dataclass field by field otherwise

    def run(self, ops: Sequence[Op]) -> None:
        """Apply ``ops`` as one batch to both stores and compare every answer."""
        before = dict(self.last_put)
        self._forget_empty_namespaces()
        expected = self.oracle.batch([_everything(op) for op in ops])
        ranked = {i: op for i, op in enumerate(ops) if isinstance(op, SearchOp) and op.query}
        if ranked:
            self.settle()  # every vector made: the ranking holds still until the batch writes
        wholes = {i: self._whole(op) for i, op in ranked.items()}  # before the batch, as its reads see it
        answers = self.ours.batch(ops)
        for i, (op, want, got) in enumerate(zip(ops, expected, answers, strict=True)):
            if i in ranked:
                self._compare_ranked(ranked[i], cast(list[SearchItem], want), cast(list[SearchItem], got), wholes[i])
            else:
                self._compare(op, want, got, before)
        self._record(ops)

    def mirror(self, puts: Sequence[PutOp]) -> None:
        """Put in the oracle what was put in EngramStore some other way (a bulk load), in order."""
        self.oracle.batch(puts)
        self._record(puts)

    def _record(self, ops: Sequence[Op]) -> None:
        for op in {(op.namespace, op.key): op for op in ops if isinstance(op, PutOp)}.values():
            self.last_put[(op.namespace, op.key)] = next(self._clock)
            if op.value is None:
                self.last_put.pop((op.namespace, op.key))
            elif op.index is False:  # not the replaced value's vectors either
                self.oracle._vectors[op.namespace].pop(op.key, None)

    def _forget_empty_namespaces(self) -> None:
        for namespace in [ns for ns, held in self.oracle._data.items() if not held]:
            del self.oracle._data[namespace]

    def _compare(self, op: Op, want: Any, got: Any, order: dict[tuple[tuple[str, ...], str], int]) -> None:
        if isinstance(op, GetOp):
            assert (None if want is None else rows([want])) == (None if got is None else rows([got])), op
        elif isinstance(op, ListNamespacesOp):
            assert got == want, op
        elif isinstance(op, SearchOp):
            newest = sorted(want, key=lambda i: -order[(tuple(i.namespace), i.key)])
            assert rows(got) == rows(newest[op.offset : op.offset + op.limit]), op
            assert all(i.score is None for i in got)
        else:
            assert got is None and want is None

    def _whole(self, op: SearchOp) -> list[SearchItem]:
        """EngramStore's whole ranking for a search's query and filter."""
        return self.ours.search(op.namespace_prefix, query=op.query, filter=op.filter, limit=EVERYTHING)

    def _compare_ranked(
        self, op: SearchOp, want: list[SearchItem], got: list[SearchItem], whole: list[SearchItem]
    ) -> None:
        assert len(whole) == len(want) and _by_key(whole) == _by_key(want), op  # the same items, each once
        unscored = {(tuple(i.namespace), i.key) for i in want if i.score is None}  # put with index=False
        assert {(tuple(i.namespace), i.key) for i in whole if i.score is None} == unscored, op
        scores = [i.score for i in whole if i.score is not None]
        assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores), op
        assert all(i.score is None for i in whole[len(scores) :]), op  # unscored items come last
        assert rows(got) == rows(whole[op.offset : op.offset + op.limit]), op  # the page: a slice of it


def _by_key(found: Sequence[Item]) -> dict[tuple[tuple[str, ...], str], Any]:
    return {(tuple(i.namespace), i.key): i.value for i in found}


def _everything(op: Op) -> Op:
    """What the oracle is asked: a search's every match (its order and page are worked out after)."""
    if isinstance(op, SearchOp):
        return op._replace(limit=EVERYTHING, offset=0)
    return op
