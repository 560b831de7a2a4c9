"""ChatGPT's data export: ``conversations.json``, a list of conversations, each a tree of message
nodes (``mapping``: id -> {message, parent, children}) whose ``current_node`` is the leaf of the
branch the person last saw. That branch, read from the root, is the conversation; an edited or
regenerated branch that was left is not.

A turn is a user message and the assistant's last text answer before the next user message,
after the last tool call (``recipient`` other than ``all``) or tool message. System messages,
custom instructions, hidden messages, tool output, code the model ran, browsing and reasoning are
never read. A turn's time is its user message's ``create_time`` (unix seconds); its session is the
conversation's id, its source id the user message's id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engramdb.integrations.imports.turns import ImportedTurn, Reading, text_of, unix_time

_TEXT = ("text", "multimodal_text")


def read(path: Path) -> Reading:
    data = json.loads(path.read_text(encoding="utf-8-sig"))  # a byte-order mark (Windows) is no JSON
    conversations = data if isinstance(data, list) else [data]
    reading = Reading()
    for conversation in conversations:
        if isinstance(conversation, Mapping) and isinstance(conversation.get("mapping"), Mapping):
            kept = len(reading.turns)
            try:
                _conversation(conversation, reading)
            except (KeyError, AttributeError, TypeError, ValueError):  # a message not in the export's shape
                del reading.turns[kept:]  # the conversation is skipped whole, not cut short
                reading.skipped["a conversation with a message not in the export's shape"] += 1
        else:
            reading.skipped["an entry that is not a conversation"] += 1
    return reading


def _branch(conversation: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The messages of the branch that ends at ``current_node``, oldest first."""
    mapping: Mapping[str, Any] = conversation["mapping"]
    node_id = conversation.get("current_node")
    if node_id not in mapping:  # no current node: the leaf written last
        leaves = [n for n in mapping.values() if isinstance(n, Mapping) and not n.get("children")]
        node_id = max(leaves, key=lambda n: (n.get("message") or {}).get("create_time") or 0, default={}).get("id")
    messages, seen = [], set()
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        if isinstance(node.get("message"), Mapping):
            messages.append(node["message"])
        node_id = node.get("parent")
    return messages[::-1]


def _kind(message: Mapping[str, Any]) -> str:
    """user, answer (assistant text for the person), tool (a call, its output) or other."""
    role = (message.get("author") or {}).get("role")
    hidden = (message.get("metadata") or {}).get("is_visually_hidden_from_conversation")
    content_type = (message.get("content") or {}).get("content_type")
    if role == "tool" or (role == "assistant" and message.get("recipient", "all") != "all"):
        return "tool"
    if hidden or content_type not in _TEXT or role not in ("user", "assistant"):
        return "other"
    return "user" if role == "user" else "answer"


def _conversation(conversation: Mapping[str, Any], reading: Reading) -> None:
    session = str(conversation.get("conversation_id") or conversation.get("id") or "")
    prompt: Mapping[str, Any] | None = None
    answer: list[str] = []
    index = 0
    for message in [*_branch(conversation), None]:
        kind = "user" if message is None else _kind(message)
        if kind == "user":
            if prompt is not None:
                if answer:
                    at = unix_time(prompt.get("create_time")) or unix_time(conversation.get("create_time"))
                    text = text_of((prompt.get("content") or {}).get("parts"))
                    reading.turns.append(ImportedTurn(f"chatgpt:{session}", index, text, answer[-1], at, prompt["id"]))
                    index += 1
                else:
                    reading.skipped["a user message with no answer"] += 1
            prompt, answer = message, []
        elif kind == "tool":
            answer = []
        elif (
            kind == "answer"
            and message is not None
            and message.get("status", "finished_successfully") == ("finished_successfully")
        ):
            text = text_of((message.get("content") or {}).get("parts"))
            answer = [text] if text.strip() else answer
        elif kind == "other":
            reading.skipped["a system, hidden or non-text message"] += 1
