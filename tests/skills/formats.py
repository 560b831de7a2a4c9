"""How each runtime reads a skill's front matter, as its own documentation or code says; each function
returns what that runtime would refuse or change in a ``SKILL.md``.

claude-code  YAML front matter; ``name`` lowercase letters, digits and hyphens, at most 64
             characters; ``description`` is what Claude reads to decide when to use the skill
             (Claude Code's "Extend Claude with skills"; the Agent Skills format: at most 1,024).
codex        YAML with string ``name`` and ``description``, each made one line, non-empty, at most
             64 and 1,024 characters; hidden files and folders are skipped
             (codex-rs/core-skills/src/loader.rs: parse_skill_file, validate_len, discover_skills_under_root).
openclaw     single-line front matter keys only ("the parser used by the embedded agent supports
             single-line frontmatter keys only", docs.openclaw.ai/tools/skills), name and description.
hermes       Hermes' own parser (``agent.skill_utils.parse_frontmatter``); a name past 64 or a
             description past 1,024 characters is cut (tools/skills_tool.py, MAX_NAME_LENGTH and
             MAX_DESCRIPTION_LENGTH): the discovery test checks what Hermes lists.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml

AGENT_SKILLS_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def front_matter(text: str) -> dict[str, Any] | None:
    """The front matter as YAML reads it, or None when there is none."""
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return None
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        return None
    parsed = yaml.safe_load("\n".join(lines[1:end]))
    return parsed if isinstance(parsed, dict) else None


def _agent_skills(text: str, folder: str) -> list[str]:
    data = front_matter(text)
    if data is None:
        return ["no YAML front matter"]
    name, description = data.get("name"), data.get("description")
    found = []
    if not isinstance(name, str) or not AGENT_SKILLS_NAME.fullmatch(name) or len(name) > 64:
        found.append(f"name {name!r}: lowercase letters, digits and hyphens, at most 64")
    if name != folder:
        found.append(f"name {name!r} is not the folder's {folder!r}")
    if not isinstance(description, str) or not 0 < len(" ".join(description.split())) <= 1024:
        found.append("description: a string of 1 to 1,024 characters")
    return found


def claude_code(text: str, folder: str) -> list[str]:
    return _agent_skills(text, folder)


def codex(text: str, folder: str) -> list[str]:
    return _agent_skills(text, folder)


def openclaw(text: str, folder: str) -> list[str]:
    lines = text.split("\n")
    end = lines.index("---", 1) if lines[0] == "---" and "---" in lines[1:] else 0
    single = [
        f"line {i + 1} continues a key" for i, line in enumerate(lines[1:end], 1) if not re.match(r"\w[\w-]*:", line)
    ]
    return single + _agent_skills(text, folder)


def hermes(text: str, folder: str) -> list[str]:
    from agent.skill_utils import parse_frontmatter  # hermes-agent's own parser

    data, _ = parse_frontmatter(text)
    found = [] if data.get("name") == folder else [f"Hermes reads the name {data.get('name')!r}"]
    description = data.get("description")
    if not isinstance(description, str) or not 0 < len(description) <= 1024:
        found.append("Hermes reads no description, or cuts it")
    return found


FORMATS: dict[str, Callable[[str, str], list[str]]] = {
    "claude-code": claude_code,
    "codex": codex,
    "openclaw": openclaw,
    "hermes": hermes,
}
