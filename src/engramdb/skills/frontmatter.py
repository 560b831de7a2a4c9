"""The front matter of a skill: the lines between two ``---`` fences at the top of ``SKILL.md``.

Every runtime reads it as YAML; OpenClaw's embedded parser reads single-line keys only, so ours
are one ``key: value`` a line, which every reader agrees on. ``name`` and ``description`` follow
the Agent Skills format the four runtimes share: a name of 1 to 64 lowercase letters, digits and
single hyphens, the same as the skill's folder; a description of 1 to 1,024 characters.
"""

from __future__ import annotations

import re

FENCE = "---"
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
_KEY = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):(?: (.*))?")
# In a plain (unquoted) YAML value, ': ' starts a mapping and ' #' a comment; these open other syntax.
_PLAIN_BREAKERS = re.compile(r": | #|:$")
_INDICATORS = frozenset("[]{}&*!|>'\"%@`,?-#")


def split(text: str) -> tuple[list[str], str] | None:
    """Return the front matter's lines and the body, or None when the text opens with none."""
    lines = text.split("\n")
    if not lines or lines[0] != FENCE:
        return None
    end = next((i for i in range(1, len(lines)) if lines[i] == FENCE), None)
    if end is None:
        return None
    return lines[1:end], "\n".join(lines[end + 1 :])


def fields(text: str) -> dict[str, str]:
    """Return the front matter's ``key: value`` pairs (an unparsable line is skipped: see ``problems``)."""
    found: dict[str, str] = {}
    for line in (split(text) or ([], ""))[0]:
        matched = _KEY.fullmatch(line)
        if matched:
            found[matched.group(1)] = _unquoted((matched.group(2) or "").strip())
    return found


def problems(text: str, folder: str) -> list[str]:
    """Return what is wrong with the front matter of the skill in ``folder`` (empty: nothing)."""
    parts = split(text)
    if parts is None:
        return ["no front matter: the file must open with a '---' line and close it with another"]
    found = [f"line {i}: not one 'key: value' line" for i, line in enumerate(parts[0], 2) if not _KEY.fullmatch(line)]
    values = fields(text)
    name, description = values.get("name", ""), values.get("description", "")
    if not NAME.fullmatch(name) or len(name) > MAX_NAME:
        found.append(f"name {name!r}: 1 to {MAX_NAME} lowercase letters, digits and single hyphens")
    if name != folder:
        found.append(f"name {name!r} is not its folder's name {folder!r}")
    if not 0 < len(description) <= MAX_DESCRIPTION:
        found.append(f"description: 1 to {MAX_DESCRIPTION} characters, not {len(description)}")
    for key, value in _raw(parts[0]).items():
        if _PLAIN_BREAKERS.search(value) or value[:1] in _INDICATORS:
            found.append(
                f"{key}: YAML would not read this plain value as written (': ', ' #' or a leading {value[:1]!r})"
            )
    return found


def _raw(lines: list[str]) -> dict[str, str]:
    return {m.group(1): (m.group(2) or "").strip() for m in map(_KEY.fullmatch, lines) if m}


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
