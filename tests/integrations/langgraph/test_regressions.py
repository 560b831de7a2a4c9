"""Each divergence from LangGraph's ``InMemoryStore`` an outside tester found in ``EngramStore`` (issue
31), as the test that failed before and passes now, on both backends; beside each, what
``InMemoryStore`` itself answers, so the expectation is the framework's and not ours."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langgraph.store.base import GetOp, Op, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from engramdb.integrations.langgraph import EngramStore
from engramdb_bench.langgraph_load import load_items
from tests.conftest import LiveServer
from tests.integrations.langgraph.conftest import MakeStore
from tests.integrations.langgraph.oracle import reference_store


@pytest.mark.parametrize("key", ["note", "goal", "likes", "skill", "event"])
def test_a_key_named_like_a_multi_valued_kind_holds_one_value(fresh: MakeStore, key: str) -> None:
    for store in (fresh(user_id="ana"), reference_store()):
        store.put(("prefs",), key, {"v": 1})
        store.put(("prefs",), key, {"v": 2})
        assert [(i.key, i.value) for i in store.search(("prefs",))] == [(key, {"v": 2})]
        assert store.get(("prefs",), key).value == {"v": 2}  # type: ignore[union-attr]
        store.delete(("prefs",), key)
        assert store.get(("prefs",), key) is None and store.search(("prefs",)) == []


def _seventy(store: EngramStore | InMemoryStore) -> None:
    for i in range(70):
        store.put(("docs",), f"d{i:02d}", {"text": f"apple note {i}"})


def test_a_query_search_pages_through_the_whole_namespace(fresh: MakeStore) -> None:
    for store in (fresh(user_id="ana"), reference_store()):
        _seventy(store)
        assert len(store.search(("docs",), query="apple", limit=100)) == 70  # was 50
        assert len(store.search(("docs",), query="apple", limit=20, offset=40)) == 20  # was 10
        assert len(store.search(("docs",), query="apple", limit=20, offset=60)) == 10  # control: the end


def test_filters_choose_before_the_query_ranks(fresh: MakeStore) -> None:
    for store in (fresh(user_id="ana"), reference_store()):
        for i in range(30):
            store.put(("food",), f"pie{i}", {"text": "apple pie", "color": "green"})
        store.put(("food",), "bread", {"text": "banana bread", "color": "red"})
        red = store.search(("food",), query="apple pie", filter={"color": "red"}, limit=5)
        assert [i.key for i in red] == ["bread"]  # was []: the filter ran on recall's first 30
        assert store.search(("food",), query="apple pie", limit=1)[0].key != "bread"  # control


def test_an_item_is_found_right_after_its_put_by_any_query(fresh: MakeStore) -> None:
    store = fresh(user_id="ana")
    store.put(("notes",), "older", {"text": "the standup moved to ten"})
    store.put(("notes",), "fresh", {"text": "quarterly budget review"})  # its vector is not made yet
    by_words = store.search(("notes",), query="budget review")
    assert by_words[0].key == "fresh" and by_words[0].score == 1.0
    unrelated = store.search(("notes",), query="umbrella weather")  # no word in common with either
    assert {i.key for i in unrelated} == {"older", "fresh"}  # was: "fresh" absent for ~3 s


def test_past_a_thousand_items_every_item_and_namespace_is_seen(
    suite_server: LiveServer, fresh: MakeStore, suite_settle: Callable[[], object]
) -> None:
    store = fresh(user_id="ana")
    store.put(("logs", "first"), "oldest", {"n": -1, "text": "the very first entry"})
    newer = [(("logs", "day", f"d{i % 5}"), f"k{i}", {"n": i, "text": f"entry {i}"}) for i in range(1_050)]
    load_items(suite_server.store.tenant("t1"), suite_server.app.state.service.shared.embedder, _scope(store), newer)
    every = store.search(("logs",), limit=2_000)
    assert len(every) == 1_051 and every[-1].key == "oldest"  # was: the newest 1,000 only
    assert [i.key for i in store.search(("logs",), filter={"n": -1})] == ["oldest"]
    assert ("logs", "first") in store.list_namespaces(prefix=("logs",))  # was missing past 1,000 items
    assert [i.key for i in store.search(("logs",), query="very first entry", limit=1)] == ["oldest"]
    assert len(store.search(("logs",), limit=1_000, offset=51)) == 1_000  # pages of 1,000 past the first


def _scope(store: EngramStore) -> dict[str, object]:
    return store._calls.scope(store.user_id)


def test_a_batch_reads_before_it_writes(fresh: MakeStore) -> None:
    for store in (fresh(user_id="ana"), reference_store()):
        store.put(("s",), "k", {"v": 1})
        ops: list[Op] = [
            PutOp(("s",), "k", {"v": 2}),
            GetOp(("s",), "k"),
            SearchOp(("s",), {"v": 2}),
            PutOp(("s",), "new", {"v": 3}),
            PutOp(("s",), "new", {"v": 4}),
            GetOp(("s",), "new"),
        ]
        _, got, found, _, _, fresh_one = store.batch(ops)
        assert got.value == {"v": 1} and found == [] and fresh_one is None  # type: ignore[union-attr]  # was v2, [k], v3
        assert store.get(("s",), "k").value == {"v": 2}  # type: ignore[union-attr]
        assert store.get(("s",), "new").value == {"v": 4}  # type: ignore[union-attr]  # the last put of a key wins


def test_prefixes_without_the_participant_read_every_participant(fresh: MakeStore) -> None:
    store = fresh(user_at=1)
    store.put(("memories", "alice"), "diet", {"text": "vegan"})
    store.put(("memories", "bob", "work"), "desk", {"text": "standing desk"})
    assert store.list_namespaces() == [("memories", "alice"), ("memories", "bob", "work")]  # raised
    assert {(i.namespace, i.key) for i in store.search(("memories",))} == {
        (("memories", "alice"), "diet"),
        (("memories", "bob", "work"), "desk"),
    }  # raised
    assert [i.key for i in store.search(("memories",), query="standing desk", limit=1)] == ["desk"]
    assert [i.key for i in store.search(("memories", "alice"))] == ["diet"]  # control: one participant's own
    other = fresh(user_at=1)  # another agent's store: its key names none of these scopes
    assert other.list_namespaces() == [] and other.search(("memories",)) == []


def test_an_item_put_with_index_false_is_not_ranked(fresh: MakeStore) -> None:
    for store in (fresh(user_id="ana"), reference_store()):
        store.put(("t",), "hidden", {"text": "zebra crossing"}, index=False)
        store.put(("t",), "shown", {"text": "pedestrian bridge"})
        store.put(("t",), "twin", {"text": "zebra crossing"})
        found = [(i.key, i.score) for i in store.search(("t",), query="zebra crossing")]
        assert [k for k, _ in found] == ["twin", "shown", "hidden"] and found[-1][1] is None  # was ranked first
        assert store.get(("t",), "hidden") is not None  # control: stored, only not indexed


def test_a_range_on_a_field_some_items_lack_skips_them_as_postgres_store_does(fresh: MakeStore) -> None:
    """A documented difference: InMemoryStore raises (``float(None)``), PostgresStore skips them."""
    store, reference = fresh(user_id="ana"), reference_store()
    for each in (store, reference):
        each.put(("p",), "priced", {"price": 5})
        each.put(("p",), "free", {"name": "no price"})
    assert [i.key for i in store.search(("p",), filter={"price": {"$gt": 1}})] == ["priced"]
    with pytest.raises(TypeError):
        reference.search(("p",), filter={"price": {"$gt": 1}})
