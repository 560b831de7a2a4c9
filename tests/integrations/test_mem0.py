"""``engramdb.Memory``, the Mem0-style API: embedded (no server) and against a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engramdb import Memory
from engramdb.errors import AuthorizationError, InvalidInputError, ModelNotConfiguredError
from engramdb.integrations.mem0 import turns
from tests.conftest import LiveServer

CHAT = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "I'm vegetarian and I live in Lisbon."},
    {"role": "assistant", "content": "Noted: vegetarian, Lisbon."},
    {"role": "tool", "content": '{"weather": "sunny"}'},
    {"role": "user", "content": "My sister Ana plays the cello."},
    {"role": "assistant", "content": "Lovely!"},
]


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Memory]:
    monkeypatch.setenv("ENGRAM_EMBEDDER", "hashing")  # the test is about the API; the model is tested elsewhere
    with Memory(home=tmp_path / "engram") as memory:
        yield memory


@pytest.fixture
def remote(server: LiveServer) -> Iterator[Memory]:
    key = server.key(role="host", agentId="coder", profileId="default")
    with Memory(server.url, api_key=key, agent_id="coder", profile_id="default") as memory:
        yield memory


def test_turns_keeps_each_user_assistant_pair_and_nothing_else() -> None:
    assert turns(CHAT) == [
        ("I'm vegetarian and I live in Lisbon.", "Noted: vegetarian, Lisbon."),
        ("My sister Ana plays the cello.", "Lovely!"),
    ]
    assert turns("just a note") == [("just a note", "")]
    assert turns([{"role": "user", "content": [{"type": "text", "text": "parts"}]}]) == [("parts", "")]


def _the_mem0_calls_work_keyed_by_user_id(m: Memory) -> None:
    added = m.add(CHAT, user_id="alice", metadata={"channel": "web"})["results"]
    assert [r["event"] for r in added] == ["ADD", "ADD"] and added[0]["metadata"] == {"channel": "web"}
    found = m.search("cello", user_id="alice")["results"]
    assert found and found[0]["id"] == added[1]["id"] and 0 <= found[0]["score"] <= 1
    assert m.search("cello", user_id="bob")["results"] == []  # another user: nothing (alice's found above)
    assert {r["id"] for r in m.get_all(user_id="alice")["results"]} == {a["id"] for a in added}
    assert m.get(added[0]["id"], user_id="alice")["memory"].startswith("I'm vegetarian")  # type: ignore[index]
    assert m.get(added[0]["id"], user_id="bob") is None
    assert [r["id"] for r in m.search("cello", user_id="alice", filters={"channel": "web"})["results"]][:1] == [
        added[1]["id"]
    ] and m.search("cello", user_id="alice", filters={"channel": "sms"})["results"] == []


def _update_corrects_delete_retracts_and_history_shows_both(m: Memory) -> None:
    fact = m.remember("Alice is vegetarian.", kind="diet", user_id="alice")["results"][0]
    updated = m.update(fact["id"], "Alice is vegan.", user_id="alice")
    assert updated["previous_id"] == fact["id"] and updated["id"] != fact["id"]
    assert [h["event"] for h in m.history(updated["id"], user_id="alice")] == ["ADD", "UPDATE"]
    assert [r["memory"] for r in m.search("vegan diet", user_id="alice")["results"]] == ["Alice is vegan."]
    m.delete(updated["id"], user_id="alice")
    assert [h["event"] for h in m.history(updated["id"], user_id="alice")] == ["ADD", "UPDATE", "DELETE"]
    assert m.search("vegan diet", user_id="alice")["results"] == []  # retracted: no longer recalled
    assert m.get(updated["id"], user_id="alice")["status"] == "retracted"  # type: ignore[index]  # kept, not erased


def _what_cannot_be_done_is_said_and_changes_nothing(m: Memory) -> None:
    episode = m.add("I moved to Porto.", user_id="alice")["results"][0]
    with pytest.raises(ModelNotConfiguredError, match="model"):  # no model here: said, and nothing stored
        m.add("I moved to Faro.", user_id="alice", infer=True)
    with pytest.raises(InvalidInputError, match="never edited"):
        m.update(episode["id"], "x", user_id="alice")
    assert [r["id"] for r in m.get_all(user_id="alice")["results"]] == [episode["id"]]  # nothing else happened
    with pytest.raises(InvalidInputError, match="user_id"):
        m.get_all()


def test_deleting_an_episode_erases_it_and_delete_all_forgets_the_user(embedded: Memory) -> None:
    m = embedded  # the embedded operator is an admin: forgetting a user needs one
    kept, gone = (m.add(f"I moved to {city}.", user_id="alice")["results"][0] for city in ("Porto", "Faro"))
    bob = m.add("I moved to Braga.", user_id="bob")["results"][0]
    m.delete(gone["id"], user_id="alice")
    assert [r["id"] for r in m.get_all(user_id="alice")["results"]] == [kept["id"]]  # only that one went
    assert m.delete_all(user_id="alice")["deleted"]["memories"] == 1
    assert m.get_all(user_id="alice")["results"] == []
    assert [r["id"] for r in m.get_all(user_id="bob")["results"]] == [bob["id"]]  # another user's stay


def test_delete_all_with_a_host_key_is_refused_and_changes_nothing(remote: Memory) -> None:
    episode = remote.add("I moved to Porto.", user_id="alice")["results"][0]
    with pytest.raises(AuthorizationError):
        remote.delete_all(user_id="alice")
    assert [r["id"] for r in remote.get_all(user_id="alice")["results"]] == [episode["id"]]


# Each check runs embedded (this process) and against a real server.


def test_the_mem0_calls_work_keyed_by_user_id_embedded(embedded: Memory) -> None:
    _the_mem0_calls_work_keyed_by_user_id(embedded)


def test_the_mem0_calls_work_keyed_by_user_id_remote(remote: Memory) -> None:
    _the_mem0_calls_work_keyed_by_user_id(remote)


def test_update_corrects_delete_retracts_and_history_shows_both_embedded(embedded: Memory) -> None:
    _update_corrects_delete_retracts_and_history_shows_both(embedded)


def test_update_corrects_delete_retracts_and_history_shows_both_remote(remote: Memory) -> None:
    _update_corrects_delete_retracts_and_history_shows_both(remote)


def test_what_cannot_be_done_is_said_and_changes_nothing_embedded(embedded: Memory) -> None:
    _what_cannot_be_done_is_said_and_changes_nothing(embedded)


def test_what_cannot_be_done_is_said_and_changes_nothing_remote(remote: Memory) -> None:
    _what_cannot_be_done_is_said_and_changes_nothing(remote)
