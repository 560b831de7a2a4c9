"""LangGraph's own store tests, run on ``EngramStore``: the scenarios of ``libs/checkpoint/tests/
test_store.py`` (langgraph 1.2.x, the tests of ``InMemoryStore`` that hold for any store), written
again here for a store the ``fresh_store`` fixture makes (both backends; the participant named by
the first label, or fixed). Where an assertion there is about ``InMemoryStore`` itself it is left
out; where EngramDB answers differently on purpose the test says so (docs/integrations.md).

Left out: the ``AsyncBatchedBaseStore`` tests (LangGraph's own batching wrapper, not a store) and
``get_text_at_path`` (a LangGraph helper).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from langgraph.store.base import InvalidNamespaceError, PutOp

from engramdb.integrations.langgraph import EngramStore


def _put_all(store: EngramStore, namespaces: list[tuple[str, ...]]) -> None:
    for i, namespace in enumerate(namespaces):
        store.put(namespace, f"id_{i}", {"data": f"value_{i:02d}"})


def test_list_namespaces_basic(fresh_store: EngramStore) -> None:
    store = fresh_store
    _put_all(
        store,
        [
            ("a", "b", "c"),
            ("a", "b", "d", "e"),
            ("a", "b", "d", "i"),
            ("a", "b", "f"),
            ("a", "c", "f"),
            ("b", "a", "f"),
            ("users", "123"),
            ("users", "456", "settings"),
            ("admin", "users", "789"),
        ],
    )
    under_ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b")) == under_ab
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == under_ab[:2]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == under_ab[2:]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(suffix=("*", "f")) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]


def test_list_namespaces_with_wildcards(fresh_store: EngramStore) -> None:
    store = fresh_store
    _put_all(
        store,
        [
            ("users", "123"),
            ("users", "456"),
            ("users", "789", "settings"),
            ("admin", "users", "789"),
            ("guests", "123"),
            ("guests", "456", "preferences"),
        ],
    )
    assert store.list_namespaces(prefix=("users", "*")) == [
        ("users", "123"),
        ("users", "456"),
        ("users", "789", "settings"),
    ]
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []
    store.put(("admin", "users", "settings", "789"), "foo", {"data": "some_val"})
    assert store.list_namespaces(prefix=("*", "users"), suffix=("settings", "*")) == [
        ("admin", "users", "settings", "789")
    ]


def test_list_namespaces_pagination(fresh_store: EngramStore) -> None:
    store = fresh_store
    for i in range(20):
        store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": f"value_{i:02d}"})
    for offset in (0, 5, 15):
        page = store.list_namespaces(prefix=("namespace",), limit=5, offset=offset)
        assert page == [("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)]


def test_list_namespaces_max_depth(fresh_store: EngramStore) -> None:
    store = fresh_store
    _put_all(store, [("a", "b", "c", "d"), ("a", "b", "c", "e"), ("a", "b", "f"), ("a", "g"), ("h", "i", "j", "k")])
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "g"), ("h", "i")]


def test_list_namespaces_no_conditions_and_empty_store(fresh_store: EngramStore) -> None:
    store = fresh_store
    assert store.list_namespaces() == []
    _put_all(store, [("a", "b"), ("c", "d"), ("e", "f", "g")])
    assert store.list_namespaces() == [("a", "b"), ("c", "d"), ("e", "f", "g")]


def test_cannot_put_empty_namespace(fresh_store: EngramStore) -> None:
    store, doc = fresh_store, {"foo": "bar"}

    async def refused() -> None:
        for namespace in ((), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")):
            with pytest.raises(InvalidNamespaceError):
                store.put(namespace, "foo", doc)
            with pytest.raises(InvalidNamespaceError):
                await store.aput(namespace, "foo", doc)

    asyncio.run(refused())
    _round_trip(store, ("foo", "langgraph", "foo"), doc, put=lambda ns: store.put(ns, "bar", doc))
    # Past the public put: a batch's PutOp is not validated, and "langgraph" as a root label works.
    _round_trip(store, ("langgraph", "foo"), doc, put=lambda ns: store.batch([PutOp(ns, "bar", doc)]))

    async def through_async() -> None:
        await store.aput(("valid", "namespace"), "key", doc)
        found = await store.aget(("valid", "namespace"), "key")
        assert found is not None and found.value == doc
        assert (await store.asearch(("valid", "namespace")))[0].value == doc
        assert (await store.asearch(("valid", "namespace"), query="bar"))[0].value == doc
        await store.adelete(("valid", "namespace"), "key")
        assert await store.aget(("valid", "namespace"), "key") is None

    asyncio.run(through_async())


def _round_trip(
    store: EngramStore, namespace: tuple[str, ...], doc: dict[str, str], put: Callable[..., object]
) -> None:
    put(namespace)
    found = store.get(namespace, "bar")
    assert found is not None and found.value == doc
    assert store.search(namespace)[0].value == doc
    assert store.search(namespace, query="bar")[0].value == doc
    store.delete(namespace, "bar")
    assert store.get(namespace, "bar") is None


def test_vector_insert_with_auto_embedding(fresh_store: EngramStore) -> None:
    store = fresh_store
    docs = [
        ("doc1", {"text": "short text"}),
        ("doc2", {"text": "longer text document"}),
        ("doc3", {"text": "longest text document here"}),
        ("doc4", {"description": "text in description field"}),
        ("doc5", {"content": "text in content field"}),
        ("doc6", {"body": "text in body field"}),
    ]
    for key, value in docs:
        store.put(("test",), key, value)
    keys = [r.key for r in store.search(("test",), query="long text")]
    assert "doc2" in keys and "doc3" in keys

    async def again() -> None:
        keys = [r.key for r in await store.asearch(("test",), query="long text")]
        assert "doc2" in keys and "doc3" in keys

    asyncio.run(again())


def test_vector_update_with_embedding(fresh_store: EngramStore, suite_settle: Callable[[], object]) -> None:
    store = fresh_store
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})
    suite_settle()
    initial = store.search(("test",), query="Zany Xerxes")
    assert initial and initial[0].key == "doc1" and initial[0].score is not None
    store.put(("test",), "doc1", {"text": "new text about dogs"})
    suite_settle()
    after = next(r.score for r in store.search(("test",), query="Zany Xerxes") if r.key == "doc1")
    assert after is not None and after < initial[0].score
    for r in store.search(("test",), query="new text about dogs"):
        if r.key == "doc1":
            assert r.score is not None and r.score > after
    # Not indexed: LangGraph's stores leave it out of a query's first three (InMemoryStore lists
    # it after every ranked item, unscored, as EngramStore does).
    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    assert not any(r.key == "doc4" for r in store.search(("test",), query="new text about dogs", limit=3))
    assert [(r.key, r.score) for r in store.search(("test",), query="new text about dogs")][-1] == ("doc4", None)


def _colours(store: EngramStore) -> None:
    docs = [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]
    for key, value in docs:
        store.put(("test",), key, value)


def test_vector_search_with_filters(fresh_store: EngramStore, suite_settle: Callable[[], object]) -> None:
    store = fresh_store
    _colours(store)
    suite_settle()  # LangGraph's stores embed as they put: rank by meaning here, not by words alone
    results = store.search(("test",), query="apple", filter={"color": "red"})
    assert len(results) == 2 and results[0].key == "doc1"
    results = store.search(("test",), query="car", filter={"color": "red"})
    assert len(results) == 2 and results[0].key == "doc2"
    results = store.search(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    assert len(results) == 3 and results[0].key == "doc4"
    results = store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    assert [r.key for r in results] == ["doc3"]


def test_vector_search_pagination(fresh_store: EngramStore, suite_settle: Callable[[], object]) -> None:
    store = fresh_store
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    suite_settle()
    first = store.search(("test",), query="test", limit=2)
    second = store.search(("test",), query="test", limit=2, offset=2)
    assert len(first) == 2 and len(second) == 2 and first[0].key != second[0].key
    assert {r.key for r in first}.isdisjoint({r.key for r in second})
    assert len(store.search(("test",), query="test", limit=10)) == 5


def test_embed_with_path_not_indexed(fresh_store: EngramStore) -> None:
    """From ``test_embed_with_path``: an item put with ``index=False`` is found, unscored. (EngramDB
    ranks by the whole value: ``index=[paths]`` and the store's ``fields`` choose nothing.)"""
    store = fresh_store
    store.put(("test",), "doc3", {"key0": "aaa", "key1": "bbb", "key2": "ccc", "key3": "ddd"}, index=["key0", "key1"])
    store.put(("test",), "doc4", {"key0": "eee", "key1": "bbb", "key2": "fff", "key3": "ggg"}, index=["key1", "key3"])
    store.put(("test",), "doc5", {"key0": "hhh", "key1": "iii"}, index=False)
    results = store.search(("test",), query="hhh")
    assert len(results) == 3
    assert next(r for r in results if r.key == "doc5").score is None
    assert store.search(("test",), query="aaa")[0].key == "doc3"
    assert store.search(("test",), query="ggg")[0].key == "doc4"


def test_non_ascii(fresh_store: EngramStore, suite_settle: Callable[[], object]) -> None:
    store = fresh_store
    texts = ["这是中文", "これは日本語です", "이건 한국어야", "Это русский", "यह रूसी है"]
    for i, text in enumerate(texts, start=1):
        store.put(("user_123", "memories"), str(i), {"text": text})
    suite_settle()
    for i, text in enumerate(texts, start=1):
        assert store.search(("user_123", "memories"), query=text)[0].key == str(i)
