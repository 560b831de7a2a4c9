"""The shipped skills as pages of blocks (tests/docs/blocks.py reads them), and the MCP calls in them.

An MCP call in a skill is a ```json block holding ``{"tool": ..., "arguments": {...}}``; a ```text
block right after it is what the tool answers. A string ``<field from tool>`` (or ``<field[0] from
tool>``) in a call or a shell block stands for that field of the last successful answer of that tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from engramdb.skills import catalog
from tests.docs.blocks import ROOT, Block, Page, read

SKILLS = ROOT / "src" / "engramdb" / "skills"
PLACEHOLDER = re.compile(r"<(\w+)(?:\[(\d+)\])? from (\w+)>")


def page_name(skill: str) -> str:
    """The skill's SKILL.md, as a path under the repository (what ``read`` takes)."""
    return str((SKILLS / skill / catalog.SKILL_FILE).relative_to(ROOT))


def skill_page(skill: str) -> Page:
    return read(page_name(skill))


def mcp_call(block: Block) -> tuple[str, dict[str, Any]] | None:
    """The tool and arguments of a ```json block that is an MCP call, else None."""
    if block.language != "json":
        return None
    try:
        data = json.loads(block.code)
    except ValueError:
        return None
    if isinstance(data, dict) and set(data) == {"tool", "arguments"} and isinstance(data["arguments"], dict):
        return str(data["tool"]), data["arguments"]
    return None


def fill(text: str, answers: Mapping[str, Mapping[str, Any]]) -> str:
    """``text`` with each placeholder replaced by the value it names; KeyError naming one that is not there."""

    def value(match: re.Match[str]) -> str:
        field, index, tool = match.group(1), match.group(2), match.group(3)
        found = answers[tool][field]
        return str(found[int(index)] if index is not None else found)

    return PLACEHOLDER.sub(value, text)
