"""The code blocks of the Markdown pages, and how the docs tests read them.

A page's fenced blocks are read in order. A ```bash (or ``sh``, ``shell``) or ```python block runs,
unless the line before it (blank lines apart) is ``<!-- not run: REASON -->``, which needs a reason.
A ```text block right after a block that runs is what it prints: each of its lines must appear in
the output, in order, where ``…`` stands for anything (after a ```json block it is kept too: the
skills' MCP calls are JSON, run by tests/skills/). A page that starts
``<!-- follows: README.md -->`` runs after that page's blocks, in the same folder and environment
(a reader who did the quickstart first). Every fence needs a language, so no block hides untagged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNNABLE = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python"}
_FENCE = re.compile(r"^(\s*)(```+)(.*)$")
_NOT_RUN = re.compile(r"^<!--\s*not run:\s*(.*?)\s*-->$")
_FOLLOWS = re.compile(r"^<!--\s*follows:\s*(\S+)\s*-->$", re.MULTILINE)


@dataclass
class Block:
    """One fenced block of a page."""

    page: str
    line: int  # of its opening fence, counted from 1
    language: str
    code: str
    not_run: str | None = None  # the reason, when marked
    output: str | None = None  # the ```text block shown right after it

    @property
    def runs(self) -> bool:
        return self.language in RUNNABLE and self.not_run is None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Page:
    """A page's blocks and what is wrong with how they are marked."""

    name: str
    blocks: list[Block] = field(default_factory=list)
    follows: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def run(self) -> list[Block]:
        return [b for b in self.blocks if b.runs]

    @property
    def skipped(self) -> list[Block]:
        return [b for b in self.blocks if b.language in RUNNABLE and b.not_run is not None]


def pages() -> list[str]:
    """Every page the docs tests read: the README and docs/*.md."""
    return ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]


def read(name: str, text: str | None = None) -> Page:
    """Parse the page ``name`` (or ``text`` under that name)."""
    lines = (ROOT / name).read_text(encoding="utf-8").splitlines() if text is None else text.splitlines()
    page = Page(name)
    follows = _FOLLOWS.search("\n".join(lines))
    page.follows = follows.group(1) if follows else None
    fences = 0
    tilde_open = False
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            if lines[i].lstrip().startswith("~~~"):
                tilde_open = not tilde_open
                if tilde_open:
                    page.problems.append(f"{name}:{i + 1}: a ~~~ fence; write ``` so that the tests read the block")
            i += 1
            continue
        indent, ticks, language = opening.group(1), opening.group(2), opening.group(3).strip()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == ticks), None)
        if end is None:
            page.problems.append(f"{name}:{i + 1}: a fence that is never closed")
            break
        fences += 2
        code = "\n".join(line.removeprefix(indent) for line in lines[i + 1 : end]) + "\n"
        block = Block(name, i + 1, language, code)
        if not language:
            page.problems.append(f"{block}: a fence without a language (```bash, ```python, ```text, ```json)")
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = _NOT_RUN.match(before)
        if marker:
            block.not_run = marker.group(1)
            if not block.not_run:
                page.problems.append(f"{block}: `not run` needs a reason")
            if language not in RUNNABLE:
                page.problems.append(f"{block}: `not run` marks a {language or 'untagged'} block, which never runs")
        elif before.startswith("<!--") and "not run" in before:
            page.problems.append(f"{block}: write the marker as <!-- not run: REASON -->")
        shown_after = page.blocks[-1] if page.blocks else None
        if (
            language == "text"
            and shown_after is not None
            and (shown_after.runs or shown_after.language == "json")
            and _only_blank(lines, shown_after, i)
        ):
            shown_after.output = code
        page.blocks.append(block)
        i = end + 1
    counted = sum(1 for line in lines if _FENCE.match(line))
    if counted != fences:
        page.problems.append(f"{name}: {counted} fence lines, {fences} read as blocks")
    return page


def _only_blank(lines: list[str], block: Block, start: int) -> bool:
    """True when only blank lines separate ``block``'s closing fence from the line ``start``."""
    closing = next(j for j in range(start - 1, -1, -1) if _FENCE.match(lines[j]))
    return closing > block.line - 1 and all(not line.strip() for line in lines[closing + 1 : start])


def missing_output(expected: str, output: str) -> str | None:
    """The first line of ``expected`` not found in ``output`` (after the previous one), or None."""
    position = 0
    for line in expected.splitlines():
        if not line.strip():
            continue
        pattern = ".*?".join(re.escape(part.strip()) for part in line.split("…"))
        found = re.compile(pattern).search(output, position)
        if found is None:
            return line
        position = found.end()
    return None
