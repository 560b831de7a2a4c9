"""``EngramStore`` in a real LangGraph graph (langgraph pinned), against a real server on both backends:
what one run of a graph stores, a later run (a new store, a new graph) reads, per participant."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, TypedDict

import pytest
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from engramdb.integrations.langgraph import EngramStore
from tests.conftest import LiveServer


class State(TypedDict):
    user: str
    said: str
    recalled: list[str]


def _remember(state: State) -> dict[str, Any]:
    if state["said"].startswith("remember: "):
        get_store().put(("memories", state["user"]), "colour", {"text": state["said"][len("remember: ") :]})
    return {}


def _recall(state: State) -> dict[str, Any]:
    found = get_store().search(("memories", state["user"]), query=state["said"], limit=3)
    return {"recalled": [item.value["text"] for item in found]}


def _graph(store: BaseStore) -> Any:
    builder = StateGraph(State)
    builder.add_node("remember", _remember)
    builder.add_node("recall", _recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


@pytest.fixture
def lg_store(server: LiveServer, host_key: str) -> Iterator[EngramStore]:
    with_user = EngramStore(server.url, api_key=host_key, agent_id="coder", profile_id="default", user_at=1)
    yield with_user
    with_user.close()


def test_a_graph_reads_what_an_earlier_run_stored(server: LiveServer, host_key: str) -> None:
    first = EngramStore(server.url, api_key=host_key, agent_id="coder", profile_id="default", user_at=1)
    _graph(first).invoke({"user": "alice", "said": "remember: my favourite colour is teal", "recalled": []})
    first.close()
    # A later run: a new store and a new graph (another process would see the same).
    later = EngramStore(server.url, api_key=host_key, agent_id="coder", profile_id="default", user_at=1)
    alice = _graph(later).invoke({"user": "alice", "said": "what is my favourite colour?", "recalled": []})
    bob = _graph(later).invoke({"user": "bob", "said": "what is my favourite colour?", "recalled": []})
    later.close()
    assert alice["recalled"] == ["my favourite colour is teal"]
    assert bob["recalled"] == []  # another participant's scope (beside alice's positive result)


def test_put_get_search_delete_and_list_namespaces(lg_store: EngramStore) -> None:
    store = lg_store
    space = ("prefs", "alice", "food")
    store.put(space, "diet", {"text": "vegetarian", "since": 2019})
    store.put(space, "city", {"text": "Lisbon", "since": 2021})
    store.put(("prefs", "alice", "music"), "instrument", {"text": "cello", "since": 2005})
    item = store.get(space, "diet")
    assert item is not None and item.value == {"text": "vegetarian", "since": 2019} and item.namespace == space
    store.put(space, "diet", {"text": "vegan", "since": 2023})  # a new version replaces it
    updated = store.get(space, "diet")
    assert updated is not None and updated.value["text"] == "vegan" and updated.created_at == item.created_at
    assert updated.updated_at > item.updated_at
    store.put(space, "diet", {"text": "vegetarian", "since": 2019})  # an earlier value may come back
    assert store.get(space, "diet").value["text"] == "vegetarian"  # type: ignore[union-attr]
    found = store.search(("prefs", "alice"), query="does she play the cello")
    assert found and found[0].key == "instrument" and found[0].score is not None
    assert {i.key for i in store.search(("prefs", "alice"), filter={"since": {"$gte": 2020}})} == {"city"}
    assert {i.key for i in store.search(("prefs", "alice", "food"))} == {"diet", "city"}
    assert store.list_namespaces(prefix=("prefs", "alice")) == [("prefs", "alice", "food"), ("prefs", "alice", "music")]
    assert store.list_namespaces(prefix=("prefs", "alice"), max_depth=2) == [("prefs", "alice")]
    assert store.list_namespaces(prefix=("prefs", "alice"), suffix=("music",)) == [("prefs", "alice", "music")]
    store.delete(space, "city")
    assert store.get(space, "city") is None and store.get(space, "diet") is not None  # only that one
    assert {i.key for i in store.search(("prefs", "alice", "food"))} == {"diet"}
    assert store.list_namespaces(prefix=("prefs", "bob")) == []


def test_the_async_methods_and_batch(lg_store: EngramStore) -> None:
    store = lg_store

    async def run() -> None:
        await store.aput(("notes", "carol", "work"), "standup", {"text": "standup moved to 10:00"})
        item = await store.aget(("notes", "carol", "work"), "standup")
        assert item is not None and item.value == {"text": "standup moved to 10:00"}
        hits = await store.asearch(("notes", "carol"), query="when is the standup")
        assert [h.key for h in hits] == ["standup"]
        await store.adelete(("notes", "carol", "work"), "standup")
        assert await store.aget(("notes", "carol", "work"), "standup") is None

    asyncio.run(run())


def test_a_store_for_one_participant(server: LiveServer, host_key: str) -> None:
    mine = EngramStore(server.url, api_key=host_key, agent_id="coder", profile_id="default", user_id="dave")
    mine.put(("memories",), "pet", {"text": "a dog called Rex"})
    assert mine.get(("memories",), "pet").value == {"text": "a dog called Rex"}  # type: ignore[union-attr]
    other = EngramStore(server.url, api_key=host_key, agent_id="coder", profile_id="default", user_id="erin")
    assert other.get(("memories",), "pet") is None
    mine.close()
    other.close()
    with pytest.raises(ValueError, match="participant"):
        EngramStore(server.url, api_key=host_key)
