"""``engramdb.Memory`` against the real Mem0 (``mem0ai`` 2.2.1) as the oracle: the same calls on both,
the answers compared. The calls are those of Mem0's OSS quickstart and its memory-operations and
async pages (docs/open-source/python-quickstart.mdx, docs/core-concepts/memory-operations/{add,
search,update,delete}.mdx, docs/open-source/features/async-memory.mdx), in Mem0 2.x's call style
(``filters=``, ``top_k=``) and 0.x/1.x's (``user_id=`` keywords, ``limit=``, which Mem0 2.x
refuses: the oracle answers its 2.x translation), with ``infer`` off and on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from engramdb import AsyncMemory, Memory
from engramdb.config import Settings
from tests.assist.conftest import llm_settings
from tests.conftest import LiveServer
from tests.integrations.mem0_oracle import (
    Model,
    content,
    engram_env,
    import_mem0,
    open_mem0,
    same_history,
    same_shape,
)
from tests.sdk.chat_server import ScriptedChat

MOVIES = [
    {"role": "system", "content": "You are a movie assistant."},
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies."},
]


@pytest.fixture(scope="module")
def mem0(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return import_mem0(tmp_path_factory.mktemp("mem0-home"))


@pytest.fixture
def model() -> Model:
    return Model()


@pytest.fixture
def chat(model: Model) -> Iterator[ScriptedChat]:
    scripted = ScriptedChat(model)
    yield scripted
    scripted.close()


@pytest.fixture
def settings(tmp_path: Path, chat: ScriptedChat) -> Settings:
    """The server's settings (for ``remote``), with the scripted model configured."""
    return llm_settings(tmp_path / "server", chat.url)


@pytest.fixture
def oracle(mem0: ModuleType, tmp_path: Path, chat: ScriptedChat) -> Iterator[Any]:
    memory = open_mem0(mem0, tmp_path / "oracle", chat)
    yield memory
    memory.close()


@pytest.fixture(params=["embedded", "remote"])
def ours(request: pytest.FixtureRequest, tmp_path: Path, chat: ScriptedChat) -> Iterator[Memory]:
    if request.param == "remote":
        server: LiveServer = request.getfixturevalue("server")
        key = server.key(role="host", agentId="mem0", profileId="default")
        with Memory(server.url, api_key=key) as memory:
            yield memory
        return
    yield from embedded(request.getfixturevalue("monkeypatch"), tmp_path, chat)


def embedded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chat: ScriptedChat) -> Iterator[Memory]:
    for name, value in engram_env(chat):
        monkeypatch.setenv(name, value)
    with Memory(home=tmp_path / "engram") as memory:
        yield memory


@pytest.fixture
def ours_embedded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chat: ScriptedChat) -> Iterator[Memory]:
    """Embedded only: the operator may answer a model's fact's review, as updating one asks."""
    yield from embedded(monkeypatch, tmp_path, chat)


def pair(ours: Memory, oracle: Any) -> Callable[[Callable[[Any], Any]], tuple[Any, Any]]:
    return lambda call: (call(ours), call(oracle))


def test_raw_messages_add_get_search_update_history_delete_as_mem0(ours: Memory, oracle: Any) -> None:
    both = pair(ours, oracle)
    # add.mdx: one memory per message (system left out), each with its role.
    mine, theirs = both(
        lambda m: m.add(MOVIES, user_id="alice", metadata={"category": "movie_recommendations"}, infer=False)
    )
    assert content(mine["results"]) == content(theirs["results"]) and len(mine["results"]) == 4
    ids = [r["id"] for r in mine["results"]], [r["id"] for r in theirs["results"]]
    scoped = both(
        lambda m: m.add(
            MOVIES[1:3],
            user_id="alice",
            agent_id="movie-assistant",
            run_id="session-001",
            metadata={"x": 1},
            infer=False,
        )
    )
    assert content(scoped[0]["results"]) == content(scoped[1]["results"])
    expiring = both(lambda m: m.add("Renew the passport.", user_id="alice", expiration_date="2030-01-31", infer=False))
    # get: the same shape, and every listing holds the same memories.
    for mine_id, their_id in zip(*ids, strict=True):
        same_shape(ours.get(mine_id), oracle.get(their_id))  # type: ignore[arg-type]
    same_shape(ours.get(expiring[0]["results"][0]["id"]), oracle.get(expiring[1]["results"][0]["id"]))  # type: ignore[arg-type]
    for filters in (
        {"user_id": "alice"},
        {"user_id": "alice", "agent_id": "movie-assistant"},
        {"agent_id": "movie-assistant"},
        {"user_id": "alice", "run_id": "session-001"},
        {"user_id": "alice", "agent_id": "movie-assistant", "run_id": "session-001"},
        {"user_id": "alice", "category": "movie_recommendations"},
        {"user_id": "alice", "category": {"in": ["movie_recommendations", "other"]}},
        {"user_id": "alice", "role": "assistant"},
    ):
        listed = both(lambda m, f=filters: m.get_all(filters=f))  # type: ignore[misc]
        assert content(listed[0]["results"]) == content(listed[1]["results"]), filters
        for a, b in zip(
            *(sorted(x["results"], key=lambda r: (r["memory"], str(r.get("agent_id")))) for x in listed), strict=True
        ):
            same_shape(a, b)
    assert (
        ours.get_all(filters={"user_id": "bob"})["results"]
        == oracle.get_all(filters={"user_id": "bob"})["results"]
        == []
    )
    # search.mdx: the best match is the same memory, in the same shape.
    found = both(lambda m: m.search("sci-fi movies", filters={"user_id": "alice"}, top_k=3))
    assert found[0]["results"][0]["memory"] == found[1]["results"][0]["memory"] == MOVIES[3]["content"]
    same_shape(found[0]["results"][0], found[1]["results"][0])
    assert len(found[0]["results"]) <= 3 and len(found[1]["results"]) <= 3
    # update.mdx: the id stays, the text and metadata change, the history says so.
    for memory_id, m in ((ids[0][1], ours), (ids[1][1], oracle)):
        assert m.update(memory_id=memory_id, text="I love sci-fi and anime.") == {
            "message": "Memory updated successfully!"
        }
        m.update(memory_id=memory_id, text="I love sci-fi, anime and noir.", metadata={"category": "preferences"})
    same_shape(ours.get(ids[0][1]), oracle.get(ids[1][1]))  # type: ignore[arg-type]
    same_history(ours.history(ids[0][1]), oracle.history(ids[1][1]))
    # delete.mdx: gone from reads, DELETE in the history, then everything of the user.
    for memory_id, m in ((ids[0][1], ours), (ids[1][1], oracle)):
        assert m.delete(memory_id=memory_id) == {"message": "Memory deleted successfully!"}
        assert m.get(memory_id) is None
    same_history(ours.history(ids[0][1]), oracle.history(ids[1][1]))
    assert ours.delete_all(user_id="alice") == oracle.delete_all(user_id="alice")
    assert (
        ours.get_all(filters={"user_id": "alice"})["results"]
        == oracle.get_all(filters={"user_id": "alice"})["results"]
        == []
    )


def test_the_old_call_style_answers_as_its_2x_translation_does(ours: Memory, oracle: Any) -> None:
    for m in (ours, oracle):  # 0.x/1.x: user_id= on add, as in 2.x
        m.add(MOVIES, user_id="alice", agent_id="movie-assistant", infer=False)
    with pytest.raises(ValueError, match="filters"):  # Mem0 2.x refuses the old keywords on reads
        oracle.search("sci-fi movies", user_id="alice")
    old = ours.search("sci-fi movies", user_id="alice", limit=2)["results"]
    new = oracle.search("sci-fi movies", filters={"user_id": "alice"}, top_k=2)["results"]
    assert len(old) == len(new) == 2 and old[0]["memory"] == new[0]["memory"]
    same_shape(old[0], new[0])
    assert content(ours.get_all(user_id="alice", agent_id="movie-assistant")["results"]) == content(
        oracle.get_all(filters={"user_id": "alice", "agent_id": "movie-assistant"})["results"]
    )
    assert ours.delete_all(agent_id="movie-assistant") == oracle.delete_all(agent_id="movie-assistant")
    assert ours.get_all(user_id="alice")["results"] == oracle.get_all(filters={"user_id": "alice"})["results"] == []


def test_inferred_memories_as_mem0(ours: Memory, oracle: Any, model: Model) -> None:
    turn = [
        {"role": "user", "content": "I moved to Lisbon last month."},
        {"role": "assistant", "content": "Noted!"},
    ]
    mine, theirs = ours.add(turn, user_id="alice"), oracle.add(turn, user_id="alice")  # infer=True: Mem0's default
    assert model.mem0_prompts and model.engram.asked("extract")  # each asked the model
    assert (
        [(r["memory"], r["event"]) for r in mine["results"]]
        == [(r["memory"], r["event"]) for r in theirs["results"]]
        == [("The user lives in Lisbon.", "ADD")]
    )
    assert mine["results"][0]["status"] == "pending_review"  # derived by a model: waits for a reviewer, and says so
    found = ours.search("Where does the user live?", filters={"user_id": "alice"}, threshold=0.0)["results"]
    expected = oracle.search("Where does the user live?", filters={"user_id": "alice"}, threshold=0.0)["results"]
    assert [r["memory"] for r in found] == [r["memory"] for r in expected] == ["The user lives in Lisbon."]
    assert content(ours.get_all(filters={"user_id": "alice"})["results"]) == content(
        oracle.get_all(filters={"user_id": "alice"})["results"]
    )
    assert ours.add("Nothing worth keeping.", user_id="alice") == oracle.add("Nothing worth keeping.", user_id="alice")


def test_reset_erases_everything_as_mem0(ours: Memory, oracle: Any) -> None:
    for m in (ours, oracle):
        memory_id = m.add("I like tea.", user_id="alice", infer=False)["results"][0]["id"]
        m.add("I like coffee.", agent_id="barista", infer=False)
        m.update(memory_id, text="I like green tea.")
        m.reset()
        assert m.get_all(filters={"user_id": "alice"})["results"] == []
        assert m.get_all(filters={"agent_id": "barista"})["results"] == []
        assert m.get(memory_id) is None and m.history(memory_id) == []


def test_async_memory_as_mem0(mem0: ModuleType, tmp_path: Path, chat: ScriptedChat, ours_embedded: Memory) -> None:
    """async-memory.mdx's core operations, on AsyncMemory of both (updating a model's fact before review)."""
    theirs = open_mem0(mem0, tmp_path / "async-oracle", chat, asynchronous=True)
    mine = AsyncMemory.__new__(AsyncMemory)
    mine.sync = ours_embedded

    async def core(memory: Any) -> list[Any]:
        added = await memory.add(
            messages=[{"role": "user", "content": "I'm travelling to SF"}, {"role": "assistant", "content": "Great!"}],
            user_id="alice",
        )
        memory_id = added["results"][0]["id"]
        found = await memory.search(query="Where am I travelling?", filters={"user_id": "alice"}, threshold=0.0)
        listed = await memory.get_all(filters={"user_id": "alice"})
        one = await memory.get(memory_id=memory_id)
        await memory.update(memory_id=memory_id, text="I'm travelling to Seattle")
        history = await memory.history(memory_id=memory_id)
        await memory.delete(memory_id=memory_id)
        await memory.delete_all(user_id="alice")
        return [added, found, listed, one, history, await memory.get_all(filters={"user_id": "alice"})]

    a, b = asyncio.run(core(mine)), asyncio.run(core(theirs))
    theirs.close()
    assert [r["memory"] for r in a[0]["results"]] == [r["memory"] for r in b[0]["results"]]
    assert [r["memory"] for r in a[1]["results"]] == [r["memory"] for r in b[1]["results"]]
    assert content(a[2]["results"]) == content(b[2]["results"])
    assert a[3]["memory"] == b[3]["memory"] and a[3]["hash"] == b[3]["hash"]
    assert [(h["event"], h["new_memory"]) for h in a[4]] == [(h["event"], h["new_memory"]) for h in b[4]]
    assert a[5] == b[5] == {"results": []}
