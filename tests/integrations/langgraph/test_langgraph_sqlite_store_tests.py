"""LangGraph's own store tests, run on ``EngramStore``: the scenarios of ``libs/checkpoint-sqlite/
tests/test_store.py`` (langgraph 1.2.x) that hold for any ``BaseStore`` (batches, namespaces, filters,
escaping), written again here for the ``fresh_store`` fixture (both backends, both ways of naming
the participant). Left out: SqliteStore's own SQL, migrations and vector tables. Where that file
holds SqliteStore to something LangGraph's reference (``InMemoryStore``) does not do, the test
follows the reference and says so.
"""

from __future__ import annotations

import pytest
from langgraph.store.base import GetOp, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from engramdb.integrations.langgraph import EngramStore


def test_batch_order(fresh_store: EngramStore) -> None:
    store = fresh_store
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "value2"}),
            SearchOp(("test",), {"data": "value1"}, 10, 0),
            ListNamespacesOp(None, None, 10, 0),
            GetOp(("test",), "key3"),
        ]
    )
    first = results[0]
    assert isinstance(first, Item) and (first.key, first.namespace, first.value) == (
        "key1",
        ("test", "foo"),
        {"data": "value1"},
    )
    assert results[1] is None and results[4] is None
    assert [(i.key, i.value) for i in results[2]] == [("key1", {"data": "value1"})]  # type: ignore[union-attr]
    assert {("test", "foo"), ("test", "bar")} <= set(results[3])  # type: ignore[arg-type]
    again = store.batch(
        [
            SearchOp(("test",), None, 5, 0),
            GetOp(("test", "bar"), "key2"),
            ListNamespacesOp(None, None, 5, 0),
            PutOp(("test",), "key3", {"data": "value3"}),
            GetOp(("test", "foo"), "key1"),
        ]
    )
    assert len(again[0]) == 2  # type: ignore[arg-type]  # the put of key3 comes after the batch's reads
    assert isinstance(again[1], Item) and again[1].value == {"data": "value2"}
    assert again[3] is None and isinstance(again[4], Item) and again[4].value == {"data": "value1"}
    assert store.get(("test",), "key3").value == {"data": "value3"}  # type: ignore[union-attr]


def test_batch_get_put_and_delete_ops(fresh_store: EngramStore) -> None:
    store = fresh_store
    puts = [PutOp(("test",), "key1", {"data": "value1"}), PutOp(("test",), "key2", {"data": "value2"})]
    assert store.batch([*puts, PutOp(("test",), "key3", None)]) == [None, None, None]
    got = store.batch([GetOp(("test",), "key1"), GetOp(("test",), "key2"), GetOp(("test",), "key3")])
    assert [None if i is None else (i.key, i.value) for i in got] == [  # type: ignore[union-attr]
        ("key1", {"data": "value1"}),
        ("key2", {"data": "value2"}),
        None,
    ]


def test_batch_search_ops(fresh_store: EngramStore) -> None:
    store = fresh_store
    store.put(("test", "foo"), "key1", {"data": "value1", "tag": "a"})
    store.put(("test", "bar"), "key2", {"data": "value2", "tag": "a"})
    store.put(("test", "baz"), "key3", {"data": "value3", "tag": "b"})
    tagged, two, foo = store.batch(
        [
            SearchOp(("test",), {"tag": "a"}, 10, 0),
            SearchOp(("test",), None, 2, 0),
            SearchOp(("test", "foo"), None, 10, 0),
        ]
    )
    assert sorted(i.key for i in tagged) == ["key1", "key2"]  # type: ignore[union-attr]
    assert len(two) == 2  # type: ignore[arg-type]
    assert [i.namespace for i in foo] == [("test", "foo")]  # type: ignore[union-attr]


def test_batch_list_namespaces_ops(fresh_store: EngramStore) -> None:
    store = fresh_store
    for namespace, key in [
        (("test", "documents", "public"), "doc1"),
        (("test", "documents", "private"), "doc2"),
        (("test", "images", "public"), "img1"),
        (("prod", "documents", "public"), "doc3"),
    ]:
        store.put(namespace, key, {"content": key})
    every, shallow, public = store.batch(
        [
            ListNamespacesOp(None, None, 10, 0),
            ListNamespacesOp(None, 2, 10, 0),
            ListNamespacesOp((MatchCondition("suffix", ("public",)),), None, 10, 0),
        ]
    )
    assert len(every) == 4  # type: ignore[arg-type]
    assert shallow == [("prod", "documents"), ("test", "documents"), ("test", "images")]
    assert public == [("prod", "documents", "public"), ("test", "documents", "public"), ("test", "images", "public")]


def test_basic_store_operations(fresh_store: EngramStore) -> None:
    store, namespace = fresh_store, ("uid", "test", "documents")
    assert store.search(("uid",)) == []
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert item is not None and item.value == {"title": "Test Document", "content": "Hello, World!"}
    store.put(namespace, "doc1", {"title": "Updated Test Document", "content": "Hello, LangGraph!"})
    updated = store.get(namespace, "doc1")
    assert updated is not None and updated.value["title"] == "Updated Test Document"
    assert updated.updated_at >= item.updated_at and updated.created_at == item.created_at
    assert store.get(("uid", "test", "other_documents"), "doc1") is None
    store.put(namespace, "doc2", {"title": "Another Document", "content": "Greetings!"})
    assert {i.key for i in store.search(("uid", "test"), limit=10)} == {"doc1", "doc2"}
    assert (("uid", "test", "documents")) in store.list_namespaces(prefix=("uid", "test"))
    store.delete(namespace, "doc1")
    store.delete(namespace, "doc2")
    assert store.get(namespace, "doc1") is None and store.get(namespace, "doc2") is None
    assert store.search(("uid", "test"), limit=10) == []


def test_list_namespaces_operations(fresh_store: EngramStore) -> None:
    store, pre = fresh_store, "pref"
    spaces = [
        (pre, "test", "documents", "public", pre),
        (pre, "test", "documents", "private", pre),
        (pre, "test", "images", "public", pre),
        (pre, "test", "images", "private", pre),
        (pre, "prod", "documents", "public", pre),
        (pre, "prod", "documents", "some", "nesting", "public", pre),
        (pre, "prod", "documents", "private", pre),
    ]
    for namespace in spaces:
        store.put(namespace, "dummy", {"content": "dummy"})
    assert len(store.list_namespaces(prefix=(pre, "test"))) == 4
    assert len(store.list_namespaces(prefix=(pre, "test", "documents"))) == 2
    assert len(store.list_namespaces(suffix=("public", pre))) == 4
    assert len(store.list_namespaces(prefix=(pre, "test"), suffix=("public", pre))) == 2
    assert len(store.list_namespaces(prefix=(pre, "*", "documents"))) == 5
    assert len(store.list_namespaces(suffix=("*", "public", pre))) == 4
    assert store.list_namespaces(suffix=("some", "*", "public", pre)) == [spaces[5]]
    assert all(len(ns) <= 3 for ns in store.list_namespaces(max_depth=3))
    assert len(set(store.list_namespaces(max_depth=4, prefix=(pre, "*", "documents")))) == 5
    assert len(store.list_namespaces(prefix=(pre,), limit=3)) == 3
    assert len(store.list_namespaces(prefix=(pre,), offset=3)) == len(spaces) - 3
    assert set(store.list_namespaces(prefix=(pre,))) == set(spaces)


def test_search_items(fresh_store: EngramStore) -> None:
    store, base = fresh_store, "test_search_items"
    spaces = [
        (base, "documents", "user1"),
        (base, "documents", "user2"),
        (base, "reports", "d1"),
        (base, "reports", "d2"),
    ]
    values = [
        {"title": "Doc 1", "author": "John Doe", "tags": ["important"]},
        {"title": "Doc 2", "author": "Jane Smith", "tags": ["draft"]},
        {"title": "Report A", "author": "John Doe", "tags": ["final"]},
        {"title": "Report B", "author": "Alice Johnson", "tags": ["draft"]},
    ]
    for namespace, value in zip(spaces, values, strict=True):
        store.put(namespace, f"item_{namespace[-1]}", value)
    assert {i.namespace[1] for i in store.search((base, "documents"))} == {"documents"}
    assert len(store.search((base, "reports"))) == 2
    first, second = store.search((base,), limit=2), store.search((base,), limit=2, offset=2)
    assert len(first) == len(second) == 2 and {i.key for i in first}.isdisjoint({i.key for i in second})
    assert len(store.search((base,))) == 4
    assert {i.key for i in store.search((base,), filter={"author": "John Doe"})} == {"item_user1", "item_d1"}
    assert {i.key for i in store.search((base,), filter={"tags": ["draft"]})} == {"item_user2", "item_d2"}


def test_injection_in_filter_keys_and_values_finds_nothing(fresh_store: EngramStore) -> None:
    """SqliteStore refuses a filter key that would break its SQL; InMemoryStore (and EngramStore,
    whose paths are never SQL) simply finds no such field."""
    store = fresh_store
    store.put(("docs",), "public", {"access": "public", "data": "public info"})
    store.put(("docs",), "private", {"access": "private", "data": "secret", "password": "123"})
    assert [i.key for i in store.search(("docs",), filter={"access": "public"})] == ["public"]
    assert store.search(("docs",), filter={"access') = 'public' OR '1'='1' OR json_extract(value, '$.": "dummy"}) == []
    for value in (
        "public' OR '1'='1",
        "public'; --",
        "public' UNION SELECT * FROM store --",
        "public\x00' OR '1'='1",
        "''''",
    ):
        assert store.search(("docs",), filter={"access": value}) == [], value
    store.put(("docs",), "doc4", {"title": "O'Brien's Document", "access": "public"})
    assert [i.key for i in store.search(("docs",), filter={"title": "O'Brien's Document"})] == ["doc4"]
    assert store.search(("docs",), filter={"access": "public' OR 'א'='א"}) == []


def test_numeric_filter_safety(fresh_store: EngramStore) -> None:
    store = fresh_store
    for i, (price, quantity) in enumerate([(10, 5), (20, 3), (30, 1)], start=1):
        store.put(("items",), f"item{i}", {"price": price, "quantity": quantity})
    assert sorted(i.value["price"] for i in store.search(("items",), filter={"price": {"$gt": 15}})) == [20, 30]
    assert len(store.search(("items",), filter={"price": {"$lt": float("inf")}})) == 3
    assert len(store.search(("items",), filter={"price": {"$gt": float("-inf")}})) == 3
    assert store.search(("items",), filter={"price": {"$eq": float("nan")}}) == []
    assert len(store.search(("items",), filter={"price": {"$lt": 10**100}})) == 3
    store.put(("items",), "item4", {"price": -10, "quantity": 0})
    assert [i.key for i in store.search(("items",), filter={"price": {"$lt": 0}})] == ["item4"]


def test_boolean_filter_safety(fresh_store: EngramStore) -> None:
    store = fresh_store
    for key, active in (("flag1", True), ("flag2", False), ("flag3", True)):
        store.put(("flags",), key, {"active": active, "name": key})
    assert sorted(i.key for i in store.search(("flags",), filter={"active": True})) == ["flag1", "flag3"]
    assert [i.key for i in store.search(("flags",), filter={"active": False})] == ["flag2"]


def test_filter_keys_with_hyphens_and_digits(fresh_store: EngramStore) -> None:
    """SqliteStore also reads ``"user.access-level"`` as a nested path; InMemoryStore, the reference,
    reads it as one key (so does EngramStore)."""
    store = fresh_store
    store.put(("docs",), "hyphen", {"access-level": "public", "user": {"access-level": "nested"}})
    store.put(("docs",), "digit", {"123abc": "ok", "user": {"123abc": "ok2"}, "user.123abc": "dotted"})
    assert [i.key for i in store.search(("docs",), filter={"access-level": "public"})] == ["hyphen"]
    assert [i.key for i in store.search(("docs",), filter={"123abc": "ok"})] == ["digit"]
    assert [i.key for i in store.search(("docs",), filter={"user": {"access-level": "nested"}})] == ["hyphen"]
    assert [i.key for i in store.search(("docs",), filter={"user.123abc": "dotted"})] == ["digit"]
    assert store.search(("docs",), filter={"user.access-level": "nested"}) == []


def _namespaces_found(store: EngramStore, prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
    return {item.namespace for item in store.search(prefix, limit=100)}


@pytest.mark.parametrize(
    ("spaces", "prefix", "expected"),
    [
        (
            [("foo",), ("foo", "child"), ("foo", "child", "deep"), ("foobar",), ("foobar", "baz"), ("foo2",)],
            ("foo",),
            {("foo",), ("foo", "child"), ("foo", "child", "deep")},
        ),
        ([("foo",), ("foobar",), ("foobar", "baz"), ("foo2",)], ("foobar",), {("foobar",), ("foobar", "baz")}),
        ([("foo",), ("foo2",)], ("fo",), set()),
        ([("user_1",), ("user_1", "child"), ("userX1",)], ("user_1",), {("user_1",), ("user_1", "child")}),
        ([("a%b",), ("axxb",)], ("a%b",), {("a%b",)}),
        ([("star*",), ("starX",)], ("star*",), {("star*",)}),
        ([("Foo",), ("foo",)], ("foo",), {("foo",)}),
        ([("a",), ("b", "c"), ("d", "e", "f")], (), {("a",), ("b", "c"), ("d", "e", "f")}),
    ],
)
def test_search_prefix_is_whole_labels_literal_and_case_sensitive(
    fresh_store: EngramStore, spaces: list[tuple[str, ...]], prefix: tuple[str, ...], expected: set[tuple[str, ...]]
) -> None:
    for namespace in spaces:
        fresh_store.put(namespace, "k", {"v": 1})
    assert _namespaces_found(fresh_store, prefix) == expected


def test_list_namespaces_segment_boundary_and_newlines(fresh_store: EngramStore) -> None:
    store = fresh_store
    for namespace in [("foo",), ("foo", "child"), ("foobar",), ("uid", "users", "alice"), ("uid", "users", "malice")]:
        store.put(namespace, "k", {"v": 1})
    store.put(("uid", "a", "b", "alice"), "k", {"v": 1})
    store.put(("users", "alice\n"), "k", {"v": 2})
    assert set(store.list_namespaces(prefix=("foo",), limit=100)) == {("foo",), ("foo", "child")}
    assert set(store.list_namespaces(suffix=("alice",), limit=100)) == {
        ("uid", "users", "alice"),
        ("uid", "a", "b", "alice"),
    }
    assert set(store.list_namespaces(prefix=("uid", "*", "alice"), limit=100)) == {("uid", "users", "alice")}
    assert len(store.list_namespaces(prefix=("uid",), limit=100)) == 3
    assert store.list_namespaces(prefix=("users",), limit=100) == [("users", "alice\n")]


def test_list_namespaces_metacharacter_labels(fresh_store: EngramStore) -> None:
    store = fresh_store
    pairs = [("star*", "starX"), ("q?m", "qXm"), ("br[ack]et", "brXacXket"), ("user_1", "userX1"), ("a%b", "axxb")]
    for label, decoy in pairs:
        for namespace in ((label,), (decoy,), (label, "child")):
            store.put(namespace, "k", {"v": 1})
    for label, _ in pairs:
        assert set(store.list_namespaces(prefix=(label,), limit=100)) == {(label,), (label, "child")}
        assert store.list_namespaces(prefix=(label, "child"), limit=100) == [(label, "child")]
