"""Capture rules: what of a conversation may become a memory, and in what form.

Only the latest completed user/assistant pair is kept. System and developer prompts, tool calls
and tool results are never read. Secrets (API keys and tokens, private keys, ``.env``-style
assignments, credentials in URLs), command output and local paths are replaced by
``[redacted:<kind>]``; a pair with nothing meaningful left is refused. Text is normalised (NFC,
``\\n`` line ends, no control characters, trimmed) and bounded, before any id is computed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engramdb.contract.canonical import js_trim

TURN_CHARS = 4_000
FACT_CHARS = 2_000
SUMMARY_SIDE_CHARS = 240
_FAILED = frozenset({"error", "failed", "incomplete", "cancelled", "canceled", "aborted"})
_UNFINISHED = frozenset({"error", "length", "content_filter", "tool_calls", "function_call"})
_SHELLISH = frozenset(
    {
        "",
        "console",
        "shell",
        "shell-session",
        "sh",
        "bash",
        "zsh",
        "fish",
        "terminal",
        "output",
        "log",
        "logs",
        "text",
        "txt",
        "stdout",
        "stderr",
        "powershell",
        "ps",
        "ps1",
        "cmd",
        "bat",
    }
)

_ROOTS = (
    "home|Users|root|etc|var|tmp|opt|usr|srv|mnt|private|Volumes|proc|dev|run|snap|work|"
    "workspace|app|data|lib|bin|sbin|boot|media|nix|Library|Applications"
)
_SECRET_VALUE = r"(?=[^\s\"']*[0-9_\-!@#$%^&*+/=])[^\s\"']{6,}"

# (kind, pattern, replacement template); applied in order, private keys first (they span lines).
_RULES: list[tuple[str, re.Pattern[str], str]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
        "",
    ),
    (
        "command_output",
        re.compile(
            r"Traceback \(most recent call last\):\n(?:[ \t].*\n?)*"
            r"(?:[\w.]+(?:Error|Exception|Exit|Interrupt)\b.*)?"
        ),
        "",
    ),
    (
        "command_output",
        re.compile(
            r"(?m)^[ \t]*(?:\$|%|PS [^\n>]*>|[A-Za-z]:\\[^\n>]*>|"
            r"[\w.-]+@[\w.-]+:[^\n$#]*[$#])[ \t]+\S.*(?:\n(?![ \t]*$).*)*"
        ),
        "",
    ),
    ("env", re.compile(r"(?m)^[ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]+[ \t]*=[ \t]*\S.*$"), ""),
    ("url_credentials", re.compile(r"\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@"), r"\1{}@"),
    (
        "api_key",
        re.compile(
            r"\b(?:sk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_\-]{16,}"
            r"|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
            r"|glpat-[A-Za-z0-9_\-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}"
            r"|AIza[0-9A-Za-z_\-]{35}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|hf_[A-Za-z0-9]{30,}"
            r"|npm_[A-Za-z0-9]{36}|egm\.[a-z0-9-]+\.[A-Za-z0-9_]+\.[A-Za-z0-9_\-]+)"
        ),
        "",
    ),
    ("token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), ""),
    ("token", re.compile(r"(?i)\b(bearer|basic|token)([ \t]+)[A-Za-z0-9._~+/=\-]{16,}"), r"\1\2{}"),
    (
        "secret",
        re.compile(
            r"(?i)\b([\w.-]*(?:api[_-]?key|secret|token|passw(?:or)?d|passphrase|pwd|credential)s?[\w.-]*)"
            r"([ \t]*(?::|=|\bis\b|\bwas\b)[ \t]*)(\"[^\"\n]*\"|'[^'\n]*'|" + _SECRET_VALUE + ")"
        ),
        r"\1\2{}",
    ),
    (
        "secret",
        re.compile(
            r"\b(?=[A-Za-z0-9+/_\-]*[0-9])(?=[A-Za-z0-9+/_\-]*[a-z])"
            r"(?=[A-Za-z0-9+/_\-]*[A-Z])[A-Za-z0-9+/_\-]{32,}={0,2}"
        ),
        "",
    ),
    ("path", re.compile(r"\bfile://[^\s'\"<>]+"), ""),
    ("path", re.compile(r"(?<![\w.:/~-])(?:~|/(?:" + _ROOTS + r"))(?:/[^\s'\"`<>|;,)\]]+)+/?"), ""),
    ("path", re.compile(r"(?<![\w])[A-Za-z]:\\[^\s'\"<>|]*|\\\\[^\s\\]+\\[^\s'\"<>|]+"), ""),
]
# Each rule's clue: text its pattern cannot match without, found by a quick scan that spares most
# texts the slow ones. A clue decides only whether a rule runs, never what it redacts.
_CLUES: tuple[re.Pattern[str] | None, ...] = tuple(
    None if clue is None else re.compile(clue)
    for clue in (
        None,
        None,
        None,
        None,
        "://",  # url_credentials: a scheme
        None,
        None,
        None,
        r"(?i)api[_-]?key|secret|token|passw(?:or)?d|passphrase|pwd|credential",  # secret: its keyword
        r"[A-Za-z0-9+/_\-]{32}",  # secret: a long run of key characters
        "file://",
        r"~/|/(?:" + _ROOTS + ")/",  # path: a root and a name below it
        r"\\",  # path: a Windows one has a backslash
    )
)
_FENCE = re.compile(r"(?ms)^[ \t]*```[ \t]*([\w+.-]*)[^\n]*\n.*?(?:^[ \t]*```[ \t]*$|\Z)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]")
# A lone surrogate (half of a pair, as a JSON "\\ud800" escape can carry) has no UTF-8 form: the
# server refuses it, so a hook that must never raise replaces it, as a UTF-8 decoder would.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_PLACEHOLDER = re.compile(r"\[redacted:[a-z_]+\]")


@dataclass(frozen=True)
class Captured:
    """A pair ready to store: normalised, bounded, redacted, with its summary.

    The summary is the user's text on one line, cut at 240 characters: the server shows it
    first, then the turn text it does not already contain.
    """

    user: str
    assistant: str
    summary: str
    redactions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Refused:
    """Why nothing was captured."""

    reason: str


def message_text(message: Mapping[str, object]) -> str:
    """Return the text of a chat message (string content, or its text parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = [
            p.get("text")
            for p in content
            if isinstance(p, Mapping) and p.get("type") in ("text", "input_text", "output_text")
        ]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _is_tool_step(message: Mapping[str, object]) -> bool:
    role = message.get("role")
    return role in ("tool", "function") or (
        role == "assistant" and bool(message.get("tool_calls") or message.get("function_call"))
    )


def _is_final_answer(message: Mapping[str, object]) -> bool:
    if message.get("role") != "assistant" or _is_tool_step(message):
        return False
    if message.get("error") or message.get("partial") or message.get("status") in _FAILED:
        return False
    return message.get("finish_reason") not in _UNFINISHED and bool(js_trim(message_text(message)))


def latest_pair(messages: Sequence[Mapping[str, object]]) -> tuple[str, str] | None:
    """Return (user, assistant) of the latest completed turn, or None.

    A turn is a user message, any tool steps, then a final assistant answer; system, developer
    and tool messages are skipped, never returned; failed or unfinished answers do not count.
    """
    index = len(messages) - 1
    while index >= 0:
        if not _is_final_answer(messages[index]):
            index -= 1
            continue
        start = index - 1
        while start >= 0 and _is_tool_step(messages[start]):
            start -= 1
        if start >= 0 and messages[start].get("role") == "user" and js_trim(message_text(messages[start])):
            return message_text(messages[start]), message_text(messages[index])
        index = start
    return None


def _fence(match: re.Match[str], found: list[str]) -> str:
    if match.group(1).lower() in _SHELLISH:
        found.append("command_output")
        return "[redacted:command_output]"
    return match.group(0)


def redact(text: str) -> tuple[str, tuple[str, ...]]:
    """Return ``text`` with secrets, command output and local paths replaced, and their kinds."""
    found: list[str] = []
    text = _FENCE.sub(lambda m: _fence(m, found), text)
    for (kind, pattern, template), clue in zip(_RULES, _CLUES, strict=True):
        if clue is not None and clue.search(text) is None:
            continue
        mark = f"[redacted:{kind}]"
        replacement = template.format(mark) if template else mark
        text, count = pattern.subn(replacement, text)
        found.extend([kind] * count)
    return text, tuple(dict.fromkeys(found))


def normalize(text: str, limit: int) -> str:
    """Return ``text`` in NFC with ``\\n`` line ends, no control characters, trimmed, bounded."""
    text = _LONE_SURROGATE.sub("\ufffd", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = unicodedata.normalize("NFC", text)
    text = _CONTROL.sub("", text.replace("\t", "    "))
    text = re.sub(r"[ \t]+$", "", text, flags=re.M)
    text = js_trim(re.sub(r"\n{3,}", "\n\n", text))
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _meaningful(text: str) -> bool:
    """True when at least two letters or digits are left (read only as far as the second)."""
    found = 0
    for ch in _PLACEHOLDER.sub("", text):
        if ch.isalnum():
            found += 1
            if found == 2:
                return True
    return False


def clean_text(text: str, limit: int = FACT_CHARS) -> tuple[str, tuple[str, ...]] | Refused:
    """Return the redacted, normalised, bounded form of ``text``, or why it is refused."""
    redacted, kinds = redact(text)
    cleaned = normalize(redacted, limit)
    if not _meaningful(cleaned):
        return Refused("nothing meaningful is left after redaction" if kinds else "the text is empty")
    return cleaned, kinds


def clean_pair(user: str, assistant: str) -> Captured | Refused:
    """Return the pair to store, or why it is refused (empty, or nothing left but redactions)."""
    sides = []
    for name, text in (("user", user), ("assistant", assistant)):
        cleaned = clean_text(text, TURN_CHARS)
        if isinstance(cleaned, Refused):
            return Refused(f"{name} text: {cleaned.reason}")
        sides.append(cleaned)
    (u, u_kinds), (a, a_kinds) = sides
    return Captured(u, a, _short(u), tuple(dict.fromkeys(u_kinds + a_kinds)))


def shown_text(captured: Captured) -> str:
    """Return the episode as recall shows it (the server's rule: summary, then what it lacks)."""
    lines = [captured.summary]
    if captured.user != captured.summary:
        lines.append(f"User: {captured.user}")
    lines.append(f"Assistant: {captured.assistant}")
    return "\n".join(lines)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SUMMARY_SIDE_CHARS else flat[: SUMMARY_SIDE_CHARS - 1].rstrip() + "…"
