"""The scripted OpenAI-compatible chat server (``engramdb_bench.scripted_chat``), for the tests."""

from __future__ import annotations

from engramdb_bench.scripted_chat import Reply, Script, ScriptedChat, data_of, purpose_of, word_vector

__all__ = ["Reply", "Script", "ScriptedChat", "data_of", "purpose_of", "word_vector"]
