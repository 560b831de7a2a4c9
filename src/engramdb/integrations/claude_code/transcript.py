"""Claude Code's transcript, the session's JSONL file, read as the person's turns.

Each line is one entry: ``type`` (``user``, ``assistant``, ``system``, and others such as
``summary`` or ``file-history-snapshot``), ``message`` ({``role``, ``content``}: a string, or
blocks of ``text``, ``thinking``, ``tool_use``, ``tool_result``, ``image``), ``uuid`` and
``parentUuid``, ``isSidechain`` (a subagent's entries), ``isMeta`` (Claude Code's own notes: the
local-command caveat, an expanded slash command), ``isCompactSummary`` (the summary a compaction
hands the model as a user entry), ``toolUseResult`` (on a tool result: the tool's raw output, or
``"User rejected tool use"``), ``timestamp``, ``sessionId``. An assistant message is written one
content block per entry, the entries sharing ``message.id``; tool results come back as user
entries. A compaction writes a ``system`` entry of subtype ``compact_boundary``, then the summary.

A turn starts at a prompt of the person: a user entry of the main thread that is not meta, not
a compaction summary, holds no tool result and is not one of Claude Code's markers (an
interruption, a local command's output). A slash command is a prompt too (``/name args``). The
turn holds every entry up to the next prompt; its answer is the assistant's last message with
text after the turn's last tool use, never a preamble before a tool call, a thinking block or a
tool's output. A line that does not parse (one being written as the hook reads) is passed over.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

INTERRUPTED = "[Request interrupted by user"  # "...]" and "... for tool use]"
REJECTED_RESULT = "User rejected tool use"  # toolUseResult of a tool call the person refused
REJECTED_TEXT = ("The user doesn't want to proceed with this tool use", "The user doesn't want to take this action")
LOCAL_OUTPUT = ("<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>", "<bash-stderr>")
# Claude Code's own words in user entries (meta in recent versions, not always in older ones).
HARNESS = (*LOCAL_OUTPUT, "<local-command-caveat>", "<task-notification>", "Stop hook feedback:")
_COMMAND = re.compile(r"<command-name>\s*/?([^<\s]+)\s*</command-name>")
_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_BASH = re.compile(r"<bash-input>(.*?)</bash-input>", re.S)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


@dataclass(frozen=True)
class Turn:
    """One turn of the person's: the prompt, the final answer, and how the turn ended.

    ``ended``: ``answered`` (a final answer and nothing unfinished after it), ``interrupted``
    (the person pressed Esc), ``rejected`` (the person refused a tool call), ``failed`` (an API
    error ended it), ``local`` (a local command: no model turn), ``open`` (no final answer yet).
    """

    ordinal: int  # the prompt's place among the transcript's prompts, from 0
    uuid: str | None  # the prompt entry's uuid
    prompt: str
    answer: str
    ended: str
    at: str | None = None  # the prompt entry's timestamp (when the person said it)

    @property
    def completed(self) -> bool:
        return self.ended == "answered"


def read_entries(path: str | Path) -> list[dict[str, Any]]:
    """The transcript's entries, in order; lines that are not a JSON object are passed over."""
    entries = []
    # Newlines only: U+2028 and U+2029 may stand unescaped in a JSON string (JSON.stringify leaves them),
    # and str.splitlines() would break the line there and lose the entry.
    for line in Path(path).read_text(encoding="utf-8-sig", errors="replace").split("\n"):
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line being written as we read: the next hook sees it whole
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def read_turns(path: str | Path) -> list[Turn]:
    """The transcript's turns, oldest first."""
    return turns(read_entries(path))


def turns(entries: Iterable[Mapping[str, Any]]) -> list[Turn]:
    """The turns of the main thread's entries (a subagent's sidechain entries are left out)."""
    found: list[Turn] = []
    current: _Draft | None = None
    for entry in entries:
        if entry.get("isSidechain"):
            continue
        prompt = prompt_text(entry)
        if prompt is not None:
            if current is not None:
                found.append(current.turn())
            uuid, at = entry.get("uuid"), entry.get("timestamp")
            current = _Draft(
                len(found), uuid if isinstance(uuid, str) else None, prompt, at if isinstance(at, str) else None
            )
        elif current is not None:
            current.add(entry)
    if current is not None:
        found.append(current.turn())
    return found


def _blocks(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _text(blocks: Iterable[Mapping[str, Any]]) -> str:
    return "\n\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")


def prompt_text(entry: Mapping[str, Any]) -> str | None:
    """The person's words if ``entry`` starts a turn (``""`` for a prompt of images alone), else None."""
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isCompactSummary"):
        return None
    if entry.get("isVisibleInTranscriptOnly"):
        return None
    blocks = _blocks(entry)
    if not blocks or any(b.get("type") == "tool_result" for b in blocks):
        return None
    raw = _text(blocks).strip()
    if raw.startswith((INTERRUPTED, *HARNESS)):
        return None
    command = _COMMAND.search(raw)
    if command:
        args = _ARGS.search(raw)
        return f"/{command.group(1)} {args.group(1).strip() if args else ''}".strip()
    bash = _BASH.search(raw)
    if bash:
        return f"!{bash.group(1).strip()}"
    text = _REMINDER.sub("", raw).strip()
    if not text and raw:
        return None  # reminders alone: Claude Code's, not the person's
    return text


def _rejected(entry: Mapping[str, Any], block: Mapping[str, Any]) -> bool:
    if entry.get("toolUseResult") == REJECTED_RESULT:
        return True
    content = block.get("content")
    text = content if isinstance(content, str) else _text(content) if isinstance(content, list) else ""
    return bool(block.get("is_error")) and text.lstrip().startswith(REJECTED_TEXT)


@dataclass
class _Draft:
    """A turn being read: what its entries said so far."""

    ordinal: int
    uuid: str | None
    prompt: str
    at: str | None = None
    answer: list[str] = field(default_factory=list)  # text of the last message after the last tool use
    message_id: object = None  # the message the answer's text belongs to
    tool_pending: bool = False  # a tool call or its result is the last thing that happened
    replied: bool = False
    local: bool = False
    interrupted: bool = False
    rejected: bool = False
    failed: bool = False

    def add(self, entry: Mapping[str, Any]) -> None:
        if entry.get("isMeta") or entry.get("isCompactSummary"):
            return
        if entry.get("type") == "user":
            self._user(entry)
        elif entry.get("type") == "assistant":
            self._assistant(entry)

    def _user(self, entry: Mapping[str, Any]) -> None:
        for block in _blocks(entry):
            if block.get("type") == "tool_result":
                self.rejected = self.rejected or _rejected(entry, block)
                self.tool_pending, self.answer = True, []
            elif block.get("type") == "text":
                text = str(block.get("text", "")).strip()
                self.interrupted = self.interrupted or text.startswith(INTERRUPTED)
                self.local = self.local or text.startswith(LOCAL_OUTPUT)

    def _assistant(self, entry: Mapping[str, Any]) -> None:
        self.replied = True
        message = entry.get("message")
        message_id = message.get("id") if isinstance(message, Mapping) else None
        if entry.get("isApiErrorMessage"):
            self.failed = True
            return
        for block in _blocks(entry):
            if block.get("type") == "tool_use":
                self.tool_pending, self.answer = True, []
            elif block.get("type") == "text" and str(block.get("text", "")).strip():
                if message_id is None or message_id != self.message_id:
                    self.answer = []  # a later message: the answer is the last one
                self.answer.append(str(block["text"]))
                self.message_id, self.tool_pending, self.failed = message_id, False, False

    def turn(self) -> Turn:
        if self.rejected:
            ended = "rejected"
        elif self.interrupted:
            ended = "interrupted"
        elif self.failed:
            ended = "failed"
        elif self.local and not self.replied:
            ended = "local"
        elif self.tool_pending or not self.answer:
            ended = "open"
        else:
            ended = "answered"
        return Turn(self.ordinal, self.uuid, self.prompt, "\n\n".join(self.answer), ended, self.at)
