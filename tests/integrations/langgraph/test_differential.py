"""Differential: random sequences of operations (puts, deletes, gets, searches with filters, queries
and pages, namespace listings, and batches of them) run on ``EngramStore`` and on LangGraph's own
``InMemoryStore``, and every answer is compared (oracle.py says how), on both backends.

``ENGRAM_LANGGRAPH_SEQUENCES`` sets how many sequences each test runs (500 by default: many short
ones, so the suite stays quick; a long run sets more). Each sequence writes under its own root
label and both stores keep everything, so a search or listing across roots sees every earlier
sequence's items too.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterator
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, Op, PutOp, SearchOp

from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.port import Store
from tests.conftest import LiveServer
from tests.integrations.langgraph.conftest import MakeStore, StillServer
from tests.integrations.langgraph.oracle import Twin

SEQUENCES = int(os.environ.get("ENGRAM_LANGGRAPH_SEQUENCES", "500"))
WORDS = ("apple", "pie", "banana", "bread", "tea", "green", "note")
USERS = ("alice", "bob")
# Kinds EngramDB holds several values of (note, goal, likes, skill, event), a path, a dot, a long key.
KEYS = ("note", "goal", "likes", "skill", "event", "diet", "k1", "a/b", "x.y", "ü", "k" * 70)
BELOW = ((), ("a",), ("a", "b"), ("c",))
LABEL = "R"  # each sequence's root label, replaced by its own

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
number = st.one_of(st.integers(-3, 3), st.sampled_from([1.5, 2.0, -0.5]))
value = st.fixed_dictionaries(
    {"text": text, "n": number},
    optional={
        "color": st.sampled_from(["red", "green"]),
        "flag": st.booleans(),
        "tags": st.lists(st.sampled_from(["x", "y"]), max_size=2),
        "meta": st.fixed_dictionaries({"a": st.integers(0, 2)}),
    },
)
# Every field's values keep one type, and "n" is always there: InMemoryStore raises (float(None))
# where a range meets a missing field (test_regressions.py holds EngramStore to PostgresStore there).
field_filter = st.fixed_dictionaries(
    {},
    optional={
        "color": st.sampled_from(["red", "green", None, {"$ne": "red"}, {"$eq": "green"}]),
        "n": st.one_of(
            number,
            st.tuples(st.sampled_from(["$gt", "$gte", "$lt", "$lte", "$eq", "$ne"]), number).map(
                lambda t: {t[0]: t[1]}
            ),
            st.tuples(number, number).map(lambda t: {"$gte": t[0], "$lt": t[1]}),
        ),
        "flag": st.booleans(),
        "tags": st.lists(st.sampled_from(["x", "y"]), max_size=2),
        "meta": st.one_of(
            st.fixed_dictionaries({"a": st.integers(0, 2)}), st.integers(0, 2).map(lambda a: {"$eq": {"a": a}})
        ),
    },
)
namespace = st.tuples(st.sampled_from(USERS), st.sampled_from(BELOW)).map(lambda t: (LABEL, t[0], *t[1]))
# An item an operation touches: one put before in the sequence (by number), or any slot.
slot = st.one_of(st.integers(0, 50), st.tuples(namespace, st.sampled_from(KEYS)))
# A prefix: of a namespace put before (by number, then depth), or one of these.
prefix = st.one_of(
    st.tuples(st.integers(0, 50), st.integers(1, 4)), st.sampled_from([("zz",), (LABEL,), (LABEL, "bob")])
)
put = st.tuples(st.just("put"), slot, value, st.sampled_from([None, None, False]))
delete = st.tuples(st.just("delete"), slot)
get = st.tuples(st.just("get"), slot)
search = st.tuples(
    st.just("search"), prefix, field_filter, st.one_of(st.none(), text), st.integers(1, 12), st.integers(0, 8)
)


def _conditions(prefix: Any, suffix: Any) -> list[tuple[Literal["prefix", "suffix"], Any]]:
    return [c for c in (("prefix", prefix), ("suffix", suffix)) if c[1]]


listing = st.tuples(
    st.sampled_from([None, (LABEL,), (LABEL, "*"), (LABEL, "alice"), (LABEL, "*", "a")]),
    st.sampled_from([None, ("a",), ("*", "b"), ("b",)]),
    st.sampled_from([None, 1, 2, 3]),
    st.integers(1, 20),
    st.integers(0, 4),
).map(lambda t: ListNamespacesOp(tuple(MatchCondition(k, p) for k, p in _conditions(t[0], t[1])), *t[2:]))


one = st.one_of(put, delete, get, get, search, search, search, listing)
# A sequence: a few puts of fresh items (one batch), then up to three steps, each one operation or a batch.
fresh = st.tuples(st.just("put"), st.tuples(namespace, st.sampled_from(KEYS)), value, st.just(None))
sequence = st.tuples(
    st.lists(fresh, min_size=1, max_size=4),
    st.lists(st.one_of(one.map(lambda o: [o]), st.lists(one, min_size=2, max_size=3)), min_size=1, max_size=3),
)
Slot = tuple[tuple[str, ...], str]


def _op(template: Any, known: list[Slot]) -> Op:
    """The operation a drawn template stands for, its references resolved against ``known``."""
    if isinstance(template, ListNamespacesOp):
        return template

    def item(ref: Any) -> Slot:
        return known[ref % len(known)] if isinstance(ref, int) else ref

    kind = template[0]
    if kind == "put":
        ns, key = item(template[1])
        return PutOp(ns, key, template[2], index=template[3])
    if kind in ("delete", "get"):
        ns, key = item(template[1])
        return PutOp(ns, key, None) if kind == "delete" else GetOp(ns, key)
    ref, filter_, query, limit, offset = template[1:]
    under = known[ref[0] % len(known)][0][: ref[1]] if isinstance(ref[0], int) else ref
    return SearchOp(under, filter_ or None, limit, offset, query)


def _embeddable(ops: list[Op]) -> bool:
    """False for a batch InMemoryStore cannot take: with an index, two puts of one value under two
    keys make it raise (it embeds each text once, then counts a vector per item)."""
    puts = {(op.namespace, op.key): op for op in ops if isinstance(op, PutOp) and op.value is not None}
    texts = [json.dumps(op.value, sort_keys=True) for op in puts.values() if op.index is not False]
    return len(texts) == len(set(texts))


ROOTS = itertools.count()


def _rooted(op: Op, root: str) -> Op:
    """The operation with the sequence's own root label in place of ``LABEL``."""

    def swap(labels: Any) -> Any:
        return tuple(root if label == LABEL else label for label in labels) if labels else labels

    if isinstance(op, (PutOp, GetOp)):
        return op._replace(namespace=swap(op.namespace))
    if isinstance(op, SearchOp):
        return op._replace(namespace_prefix=swap(op.namespace_prefix))
    assert isinstance(op, ListNamespacesOp)
    conditions = tuple(c._replace(path=swap(c.path)) for c in op.match_conditions or ())
    return op._replace(match_conditions=conditions)


def _play(twin: Twin, drawn: tuple[list[Any], list[list[Any]]]) -> None:
    """A sequence: a few puts, then steps that mostly touch what it put."""
    root = f"r{next(ROOTS)}"
    known: list[Slot] = []
    for templates in [drawn[0], *drawn[1]]:
        batch = [_op(t, known) for t in templates]  # the first puts name fresh items: known is not read
        assume(_embeddable(batch))
        twin.run([_rooted(op, root) for op in batch])
        known += [(op.namespace, op.key) for op in batch if isinstance(op, PutOp) and op.value is not None]


@pytest.fixture
def server(settings: Settings, store: Store) -> Iterator[LiveServer]:
    """The test's server without its background jobs (``run_worker=False``): ``settle`` makes every
    vector before a ranked search. The embedding job's pass after each write took a fifth of the
    test's time on PostgreSQL; test_differential_large.py still runs with every job on."""
    live = StillServer(settings, store, HashingEmbedder())
    live.start()
    yield live
    live.stop()


@pytest.fixture
def twin(make_store: MakeStore, settle: Callable[[], int]) -> Iterator[Twin]:
    """One pair of stores for the whole test: its sequences share them (hence the health check).
    With no embedding job, ``settle`` alone makes vectors: the ranked checks also hold with none,
    so the test fails unless it made some."""
    made: list[int] = []
    yield Twin(make_store(), lambda: made.append(settle()))
    assert sum(made) > 0, "no ranked search saw a vector"


@settings(
    max_examples=SEQUENCES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate],  # no shrinking: the stores keep every sequence's items
)
@given(drawn=sequence)
def test_sequences_answer_as_in_memory_store_does(twin: Twin, drawn: tuple[list[Any], list[list[Any]]]) -> None:
    _play(twin, drawn)
