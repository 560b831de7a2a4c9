"""What the import readers and the Claude Code transcript reader make of lines real files hold:
U+2028 and U+2029 unescaped inside a JSON string (JavaScript's JSON.stringify leaves them so), bytes
that are not UTF-8, and times no calendar holds. A line broke at U+2028 (str.splitlines) and lost its
turn; a bad byte or time ended the whole import with a traceback instead of a skipped count."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any, cast

import pytest

from engramdb.errors import InvalidInputError
from engramdb.integrations.claude_code.transcript import read_turns
from engramdb.integrations.imports import chatgpt, jsonl, mem0
from engramdb.integrations.imports.running import import_file

SAMPLES = Path(__file__).parent / "samples"
SEPARATORS = "\u2028\u2029\u0085"


def _line(session: str, role: str, content: str, **extra: object) -> str:
    return json.dumps({"session": session, "role": role, "content": content, **extra}, ensure_ascii=False)


def test_a_jsonl_turn_keeps_its_line_separators_and_bad_lines_are_counted(tmp_path: Path) -> None:
    said = f"first line{SEPARATORS[0]}second{SEPARATORS[1]}third{SEPARATORS[2]}end"
    lines = [
        _line("s", "user", said, timestamp="2026-04-03T18:02:15Z"),
        _line("s", "assistant", "noted"),
        _line("s", "user", "a time past any calendar", timestamp=1e20),
        _line("s", "assistant", "still read"),
    ]
    path = tmp_path / "chat.jsonl"
    path.write_bytes("\n".join(lines).encode() + b'\n{"session": "s", "role": "user", "content": "caf\xe9"}\n')
    reading = jsonl.read(path)
    assert [(t.user, t.assistant) for t in reading.turns] == [
        (said, "noted"),
        ("a time past any calendar", "still read"),
    ]
    assert reading.turns[1].at is None  # read without a time, not a traceback
    assert reading.skipped["a line that is not UTF-8"] == 1


def test_a_claude_code_prompt_with_a_line_separator_is_still_a_turn(tmp_path: Path) -> None:
    sample = (SAMPLES / "claude-code.jsonl").read_text(encoding="utf-8")
    prompt = "Why do retries of failed card payments double-charge some customers?"
    assert prompt in sample  # the control: the prompt the change below is made in
    changed = tmp_path / "transcript.jsonl"
    changed.write_text(sample.replace(prompt, f"Why do retries{SEPARATORS[0]}double-charge?"), encoding="utf-8")
    before, after = read_turns(SAMPLES / "claude-code.jsonl"), read_turns(changed)
    assert len(after) == len(before)
    assert after[0].prompt == f"Why do retries{SEPARATORS[0]}double-charge?" and after[0].answer == before[0].answer


def test_a_chatgpt_conversation_not_in_the_exports_shape_is_skipped_whole(tmp_path: Path) -> None:
    conversations = json.loads((SAMPLES / "chatgpt-conversations.json").read_text(encoding="utf-8"))
    whole = chatgpt.read(SAMPLES / "chatgpt-conversations.json")
    broken = json.loads(json.dumps(conversations[0]))
    for node in broken["mapping"].values():
        message = node.get("message")
        if isinstance(message, dict) and message.get("author", {}).get("role") == "user":
            del message["id"]  # a user message without its id
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([broken, *conversations[1:]]), encoding="utf-8")
    reading = chatgpt.read(path)
    assert reading.skipped["a conversation with a message not in the export's shape"] == 1
    first = {f"chatgpt:{conversations[0].get('conversation_id') or conversations[0].get('id')}"}
    assert any(t.session in first for t in whole.turns)  # the control: the whole file has its turns
    assert not first & {t.session for t in reading.turns}  # none of them now, not some
    assert len(reading.turns) == len(whole.turns) - sum(t.session in first for t in whole.turns) > 0


def test_a_windows_byte_order_mark_is_no_part_of_the_first_line(tmp_path: Path) -> None:
    lines = [_line("s", "user", "first message"), _line("s", "assistant", "first answer")]
    marked = tmp_path / "chat.jsonl"
    marked.write_bytes(codecs.BOM_UTF8 + "\r\n".join(lines).encode())
    assert [(t.user, t.assistant) for t in jsonl.read(marked).turns] == [("first message", "first answer")]
    exported = (SAMPLES / "mem0-get-all.json").read_bytes()
    with_mark = tmp_path / "mem0.json"
    with_mark.write_bytes(codecs.BOM_UTF8 + exported)
    assert len(mem0.read(with_mark).turns) == len(mem0.read(SAMPLES / "mem0-get-all.json").turns) > 0


@pytest.mark.parametrize(
    "source, content",
    [("zep", b'{"episodes": 5}'), ("chatgpt", b'[{"mapping": '), ("mem0", b'{"results": "caf\xe9"}')],
)
def test_a_file_not_in_its_sources_shape_is_refused_by_name(tmp_path: Path, source: str, content: bytes) -> None:
    path = tmp_path / "export.json"
    path.write_bytes(content)
    with pytest.raises(InvalidInputError, match=f"cannot be read as a {source} file") as refused:
        import_file(cast(Any, None), source, path)  # refused before anything is written
    assert refused.value.field == "path"
