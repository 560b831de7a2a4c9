"""Mem0's OSS Python quickstart, as published, run on ``engramdb.Memory`` with only its import changed.

The code is the quickstart's steps 2-4 (docs/open-source/python-quickstart.mdx of mem0ai/mem0),
run in a fresh interpreter whose environment is the quickstart's prerequisite in EngramDB's terms:
a model to extract memories (the scripted OpenAI-compatible server on loopback, where the
quickstart sets OPENAI_API_KEY) and the data folder."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integrations.mem0_oracle import Model, engram_env
from tests.sdk.chat_server import ScriptedChat

QUICKSTART = """
from mem0 import Memory

m = Memory()

messages = [
    {"role": "user", "content": "Hi, I'm Alex. I love basketball and gaming."},
    {"role": "assistant", "content": "Hey Alex! I'll remember your interests."}
]
m.add(messages, user_id="alex")

results = m.search("What do you know about me?", filters={"user_id": "alex"})
print(results)
"""


@pytest.fixture
def chat() -> Iterator[ScriptedChat]:
    scripted = ScriptedChat(Model())
    yield scripted
    scripted.close()


def test_mem0s_quickstart_runs_unchanged_but_the_import(tmp_path: Path, chat: ScriptedChat) -> None:
    code = QUICKSTART.replace("from mem0 import Memory", "from engramdb import Memory")
    assert code.count("engramdb") == 1 and code.replace("from engramdb import", "from mem0 import") == QUICKSTART
    model = {k: v for k, v in engram_env(chat) if k != "ENGRAM_EMBEDDER"}  # the default embedder: MiniLM, local
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ENGRAM_HOME": str(tmp_path / "engram"), **model}
    ran = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr
    printed = ast.literal_eval(ran.stdout.strip())
    [found] = printed["results"]  # the memory the model found in the conversation, in Mem0's shape
    assert found["memory"] == "Name is Alex. Enjoys basketball and gaming." and found["user_id"] == "alex"
    assert {"id", "memory", "hash", "metadata", "score", "created_at", "updated_at", "user_id"} <= set(found)
    assert 0.1 <= found["score"] <= 1  # above Mem0's default threshold
