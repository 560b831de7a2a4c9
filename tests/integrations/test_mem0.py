"""``engramdb.Memory``: one regression test per divergence an outside tester found running Mem0's
code with the import changed (issue 31), each embedded (no server) and against a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engramdb import Memory
from engramdb.errors import AuthorizationError
from tests.conftest import LiveServer

CHAT = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "I'm vegetarian and I live in Lisbon."},
    {"role": "assistant", "content": "Noted: vegetarian, Lisbon."},
]


@pytest.fixture(params=["embedded", "remote"])
def m(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Memory]:
    if request.param == "remote":
        server: LiveServer = request.getfixturevalue("server")
        key = server.key(role="host", agentId="coder", profileId="default")
        with Memory(server.url, api_key=key, agent_id="coder", profile_id="default") as memory:
            yield memory
        return
    monkeypatch.setenv("ENGRAM_EMBEDDER", "hashing")  # the test is about the API; the model is tested elsewhere
    with Memory(home=tmp_path / "engram") as memory:
        yield memory


def test_2x_filters_and_top_k_are_taken(m: Memory) -> None:
    m.add(CHAT, user_id="alex", infer=False)
    found = m.search("I live in Lisbon", filters={"user_id": "alex"}, top_k=1)["results"]
    assert [r["memory"] for r in found] == ["I'm vegetarian and I live in Lisbon."]
    assert m.search("I live in Lisbon", filters={"user_id": "bob"}, top_k=1)["results"] == []  # control: scoped


def test_get_update_history_delete_need_no_user_id(m: Memory) -> None:
    memory_id = m.add("I like tea.", user_id="alex", infer=False)["results"][0]["id"]
    assert m.get(memory_id)["memory"] == "I like tea."  # type: ignore[index]
    m.update(memory_id, text="I like green tea.")
    assert [h["event"] for h in m.history(memory_id)] == ["ADD", "UPDATE"]
    m.delete(memory_id)
    assert m.get(memory_id) is None


def test_what_add_wrote_can_be_updated_and_keeps_its_id(m: Memory) -> None:
    memory_id = m.add(CHAT, user_id="alex", infer=False)["results"][0]["id"]
    assert m.update(memory_id, text="I'm vegan and I live in Lisbon.") == {"message": "Memory updated successfully!"}
    after = m.get(memory_id)
    assert after is not None and after["id"] == memory_id and after["memory"] == "I'm vegan and I live in Lisbon."
    assert after["updated_at"] > after["created_at"]
    assert [r["id"] for r in m.search("vegan", filters={"user_id": "alex"})["results"]][:1] == [memory_id]


def test_results_carry_metadata_updated_at_hash_and_role(m: Memory) -> None:
    m.add(CHAT, user_id="alex", metadata={"channel": "web"}, infer=False)
    [hit] = m.search("I live in Lisbon", filters={"user_id": "alex"}, top_k=1)["results"]
    assert hit["metadata"] == {"channel": "web"} and hit["role"] == "user" and len(hit["hash"]) == 32
    assert hit["updated_at"] == hit["created_at"] and hit["user_id"] == "alex"


def test_history_has_mem0s_shape(m: Memory) -> None:
    memory_id = m.add("I like tea.", user_id="alex", infer=False)["results"][0]["id"]
    m.update(memory_id, text="I like coffee.")
    m.delete(memory_id)
    rows = m.history(memory_id)
    assert [(r["event"], r["old_memory"], r["new_memory"], r["is_deleted"]) for r in rows] == [
        ("ADD", None, "I like tea.", False),
        ("UPDATE", "I like tea.", "I like coffee.", False),
        ("DELETE", "I like coffee.", None, True),
    ]
    assert {r["memory_id"] for r in rows} == {memory_id}


def test_infer_false_stores_one_memory_per_message_with_its_role(m: Memory) -> None:
    added = m.add(CHAT, user_id="alex", infer=False)["results"]
    assert [(r["memory"], r["role"]) for r in added] == [
        (CHAT[1]["content"], "user"),
        (CHAT[2]["content"], "assistant"),
    ]


def test_agent_id_writes_are_listed_by_get_all_filters(m: Memory) -> None:
    m.add("I prefer aisle seats.", user_id="alex", agent_id="travel", infer=False)
    m.add("I like tea.", user_id="alex", infer=False)
    assert len(m.get_all(filters={"user_id": "alex"})["results"]) == 2
    assert [r["memory"] for r in m.get_all(filters={"agent_id": "travel"})["results"]] == ["I prefer aisle seats."]
    assert [r["memory"] for r in m.get_all(filters={"user_id": "alex", "agent_id": "travel"})["results"]] == [
        "I prefer aisle seats."
    ]


def test_reset_from_config_and_async_memory_exist(m: Memory, tmp_path: Path) -> None:
    m.add("I like tea.", user_id="alex", infer=False)
    m.reset()
    assert m.get_all(filters={"user_id": "alex"})["results"] == []
    with Memory.from_config({"engramdb": {"home": str(tmp_path / "configured")}}) as configured:
        assert configured.get_all(filters={"user_id": "alex"})["results"] == []
    from engramdb import AsyncMemory

    assert AsyncMemory.from_config({"engramdb": {"home": str(tmp_path / "a")}}).sync.get("0" * 64) is None


def test_forget_erases_the_user_with_an_admin_and_a_host_key_is_refused(
    m: Memory, request: pytest.FixtureRequest
) -> None:
    memory_id = m.add("I moved to Porto.", user_id="alice", infer=False)["results"][0]["id"]
    if "remote" in request.node.name:
        with pytest.raises(AuthorizationError):
            m.forget("alice")
        assert m.get(memory_id) is not None  # nothing changed
        return
    assert m.forget("alice")["deleted"]["memories"] == 1
    assert m.get(memory_id) is None and m.history(memory_id) == []


def test_get_all_delete_all_and_reset_go_past_a_listings_page(m: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each read or deleted one page of a scope's memories (1,000) and left the rest; here a page is two."""
    from engramdb.integrations.mem0 import store

    monkeypatch.setattr(store, "PAGE", 2)
    for n in range(5):
        m.add(f"I like tea number {n}.", user_id="alice", infer=False)
        m.add(f"I like coffee number {n}.", user_id="bob", infer=False)
    for user in ("carol", "dave"):  # four users: two pages of scopes
        m.add("I like water.", user_id=user, infer=False)
    alices = m.get_all(filters={"user_id": "alice"}, top_k=100)["results"]
    assert sorted(r["memory"] for r in alices) == [f"I like tea number {n}." for n in range(5)]  # three pages
    assert len(m.get_all(filters={"user_id": "alice"}, top_k=3)["results"]) == 3  # top_k still cuts
    m.delete_all(user_id="alice")
    assert m.get_all(filters={"user_id": "alice"})["results"] == []
    assert len(m.get_all(filters={"user_id": "bob"})["results"]) == 5  # the positive control: bob's are kept
    m.reset()
    for user in ("bob", "carol", "dave"):  # reset reached the scopes of the second page too
        assert m.get_all(filters={"user_id": user})["results"] == [], user
    monkeypatch.setattr(store, "PAGE", 1000)
    assert m.get_all(filters={"user_id": "alice"})["results"] == m.get_all(filters={"user_id": "bob"})["results"] == []
