"""The real Mem0 (``mem0ai``, pinned in the test extra) as the oracle of ``engramdb.Memory``, offline.

Mem0's LLM and embedder are its own OpenAI clients pointed at the scripted OpenAI-compatible server
on loopback (``/chat/completions`` answered by ``script``, ``/embeddings`` by deterministic word
vectors); its vector store is Qdrant's local mode in a folder of the test, its history a SQLite file
there; telemetry is off and Mem0's home folder is the test's (set before Mem0 is imported).
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.assist.brain import Brain
from tests.sdk.chat_server import Reply, ScriptedChat, purpose_of

# What the model finds in a conversation: (words of a message, the memory), for both systems.
FINDS = (
    ("I'm Alex", "Name is Alex. Enjoys basketball and gaming."),
    ("moved to Lisbon", "The user lives in Lisbon."),
    ("travelling to SF", "The user is travelling to SF."),
)
DIMS = 64
_MEM0_ENV = {"MEM0_TELEMETRY": "False"}


def brain() -> Brain:
    """EngramDB's side of the model: each find as a fact of the user (the quickstart's a note)."""
    kinds = {"I'm Alex": "note", "moved to Lisbon": "city", "travelling to SF": "trip"}
    return Brain(
        facts=[
            (words, {"subjectKey": "user", "kind": kinds[words], "text": text, "confidence": 0.9})
            for words, text in FINDS
        ]
    )


class Model:
    """The scripted model both systems call: Mem0's extraction prompt, or EngramDB's prompts."""

    def __init__(self) -> None:
        self.engram = brain()
        self.mem0_prompts: list[str] = []

    def __call__(self, messages: list[dict[str, Any]]) -> str | Reply:
        if purpose_of(messages) != "chat":
            return self.engram(messages)
        prompt = str(messages[-1]["content"])  # Mem0's additive extraction: {"memory": [{"text": ...}]}
        self.mem0_prompts.append(prompt)
        return json.dumps({"memory": [{"text": text} for words, text in FINDS if words in prompt]})


def import_mem0(home: Path) -> ModuleType:
    """Mem0, imported with its home folder under ``home`` and telemetry off (both read at import)."""
    saved = {k: os.environ.get(k) for k in (*_MEM0_ENV, "MEM0_DIR")}
    os.environ.update({**_MEM0_ENV, "MEM0_DIR": str(home)})
    try:
        return importlib.import_module("mem0")
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def mem0_config(work: Path, chat: ScriptedChat) -> dict[str, Any]:
    """Mem0's configuration: every component local or on loopback."""
    openai = {"api_key": "scripted", "openai_base_url": chat.url, "model": "scripted"}
    return {
        "llm": {"provider": "openai", "config": openai},
        "embedder": {"provider": "openai", "config": {**openai, "embedding_dims": DIMS}},
        "vector_store": {
            "provider": "qdrant",
            "config": {"path": str(work / "qdrant"), "collection_name": "oracle", "embedding_model_dims": DIMS},
        },
        "history_db_path": str(work / "history.db"),
    }


def open_mem0(mem0: ModuleType, work: Path, chat: ScriptedChat, *, asynchronous: bool = False) -> Any:
    kind = mem0.AsyncMemory if asynchronous else mem0.Memory
    return kind.from_config(mem0_config(work, chat))


def engram_env(chat: ScriptedChat) -> Iterator[tuple[str, str]]:
    """The environment of an embedded ``engramdb.Memory`` with the scripted model."""
    yield from (("ENGRAM_EMBEDDER", "hashing"), ("ENGRAM_LLM__BASE_URL", chat.url), ("ENGRAM_LLM__MODEL", "scripted"))


# -- comparing answers -----------------------------------------------------------------------------

ENGRAM_EXTRA = {"status"}  # a key EngramDB adds (a fact waiting for review says so)


def same_shape(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> None:
    """One memory: the keys Mem0 gives and the values that do not depend on the system."""
    assert set(theirs) <= set(ours) and set(ours) - set(theirs) <= ENGRAM_EXTRA, (sorted(ours), sorted(theirs))
    for key in ("memory", "hash", "metadata", "user_id", "agent_id", "run_id", "actor_id", "role", "expiration_date"):
        assert ours.get(key) == theirs.get(key), (key, ours.get(key), theirs.get(key))
    for key in ("created_at", "updated_at"):
        assert (ours[key] is None) == (theirs[key] is None), key
        if ours[key] is not None:
            datetime.fromisoformat(ours[key])  # an ISO time, as Mem0's
    assert (ours["created_at"] == ours["updated_at"]) == (theirs["created_at"] == theirs["updated_at"])
    if "score" in theirs and theirs["score"] is not None:
        assert 0 <= ours["score"] <= 1


def content(results: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a listing holds, whatever its order and ids."""
    keys = ("memory", "role", "agent_id", "run_id", "actor_id", "event")
    return sorted((*(str(r.get(k)) for k in keys), json.dumps(r.get("metadata"), sort_keys=True)) for r in results)


def same_history(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> None:
    assert [set(r) for r in ours] == [set(r) for r in theirs]
    keys = ("event", "old_memory", "new_memory", "is_deleted", "actor_id", "role")
    assert [[r[k] for k in keys] for r in ours] == [[r[k] for k in keys] for r in theirs]
