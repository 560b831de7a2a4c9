"""Differential, past a thousand items: one store of 1,100 items (the oldest hundred each alone in
its namespace, then a thousand in a few, loaded at once), searched and listed against ``InMemoryStore`` with pages
up to 1,000 deep, with and without a query and filters, between a few more writes; on both
backends, with the participant fixed by ``user_id`` (test_differential.py names it by ``user_at``).

``ENGRAM_LANGGRAPH_LARGE_SEQUENCES`` sets how many sequences run on the store (40 by default).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, Op, PutOp, SearchOp

from engramdb_bench.langgraph_load import load_items
from tests.conftest import LiveServer
from tests.integrations.langgraph.conftest import MakeStore
from tests.integrations.langgraph.oracle import Twin

SEQUENCES = int(os.environ.get("ENGRAM_LANGGRAPH_LARGE_SEQUENCES", "40"))
WORDS = ("apple", "pie", "banana", "bread", "tea")
OLD = 100  # items each alone in a namespace, written first
MANY = 1_000  # then these, in eleven namespaces
PREFIXES = [("big",), ("big", "flat"), ("big", "deep"), ("big", "deep", "d3"), ("big", "old"), ()]


def _value(i: int) -> dict[str, Any]:
    return {"text": f"{WORDS[i % 5]} {WORDS[(i * 7) % 5]}", "n": i, "color": ("red", "green", "blue")[i % 3]}


def _items() -> list[PutOp]:
    old = [PutOp(("big", "old", f"o{i:03d}"), f"k{i}", _value(i)) for i in range(OLD)]
    deep = [("big", "deep", f"d{i}") for i in range(10)]
    many = [PutOp(("big", "flat") if i % 2 else deep[i % 10], f"m{i}", _value(i)) for i in range(MANY)]
    return old + many


@pytest.fixture
def large(server: LiveServer, make_store: MakeStore, settle: Callable[[], object]) -> Twin:
    """The oldest hundred put through the store, the thousand after them loaded at once in the
    store's own format (engramdb_bench.langgraph_load: a put each would take a minute on PostgreSQL)."""
    store = make_store(user_id="dana")
    twin = Twin(store, settle)
    puts = _items()
    twin.run(puts[:OLD])
    service = server.app.state.service
    scope = store._calls.scope("dana")  # the participant's scope, as the store names it
    load_items(
        server.store.tenant("t1"),
        service.shared.embedder,
        scope,
        [(p.namespace, p.key, p.value or {}) for p in puts[OLD:]],
    )
    twin.mirror(puts[OLD:])
    return twin


FILTERS = [
    None,
    {"color": "red"},
    {"color": "green"},
    {"n": {"$gte": 90}},
    {"n": {"$gte": 500}},
    {"n": {"$gte": 1_050}},
    {"n": {"$lt": 700}, "color": {"$ne": "red"}},
]


def _search(drawn: tuple[Any, ...]) -> SearchOp:
    prefix, filter_, query, limit, offset = drawn
    return SearchOp(prefix, filter_, limit, offset, query)


def _listing(drawn: tuple[Any, ...]) -> ListNamespacesOp:
    prefix, depth, limit, offset = drawn
    return ListNamespacesOp((MatchCondition("prefix", prefix),) if prefix else None, depth, limit, offset)


def _write(drawn: tuple[str, int, int]) -> Op:
    kind, i, j = drawn
    if kind == "put":
        return PutOp(("big", "flat"), f"m{2 * i + 1}", _value(j))  # a new version of one of the thousand
    old = ("big", "old", f"o{i % OLD:03d}")
    return PutOp(old, f"k{i % OLD}", None) if kind == "delete" else GetOp(old, f"k{i % OLD}")


search = st.tuples(
    st.sampled_from(PREFIXES),
    st.sampled_from(FILTERS),
    st.one_of(st.none(), st.none(), st.sampled_from(["apple pie", "bread", "tea banana"])),
    st.sampled_from([1, 10, 100, 999, 1_000]),
    st.sampled_from([0, 0, 40, 950, 1_050]),
).map(_search)
listing = st.tuples(
    st.sampled_from([None, ("big",), ("big", "old"), ("big", "*", "o007")]),
    st.sampled_from([None, 2, 3]),
    st.sampled_from([10, 100, 1_000]),
    st.sampled_from([0, 5, 95]),
).map(_listing)
write = st.tuples(st.sampled_from(["put", "delete", "get"]), st.integers(0, 499), st.integers(0, 999)).map(_write)
step = st.one_of(
    search.map(lambda op: [op]), listing.map(lambda op: [op]), st.lists(st.one_of(write, search), max_size=3)
)


@settings(
    max_examples=SEQUENCES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.generate],  # no shrinking: the store keeps every sequence's writes
)
@given(steps=st.lists(step, min_size=1, max_size=3))
def test_past_a_thousand_items_searches_and_listings_answer_as_in_memory_store_does(
    large: Twin, steps: list[list[Op]]
) -> None:
    for ops in steps:
        if ops:
            large.run(ops)
