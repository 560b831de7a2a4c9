"""The skills this package ships: one folder per skill, holding its ``SKILL.md`` (package data)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib.resources import files

from engramdb.errors import InvalidInputError
from engramdb.skills import frontmatter

SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class Skill:
    """One shipped skill: its folder's name and the bytes of its ``SKILL.md``."""

    name: str
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8")

    @property
    def description(self) -> str:
        return frontmatter.fields(self.text).get("description", "")

    @property
    def digest(self) -> str:
        """The SHA-256 of the file, as the install manifest records it."""
        return hashlib.sha256(self.content).hexdigest()


def names() -> list[str]:
    """Return the names of the shipped skills, sorted."""
    root = files(__package__ or "engramdb.skills")
    return sorted(item.name for item in root.iterdir() if item.is_dir() and (item / SKILL_FILE).is_file())


def load(name: str) -> Skill:
    """Return the skill ``name``; InvalidInputError naming the shipped ones if there is none."""
    if name not in names():
        raise InvalidInputError(f"no skill {name!r}; the skills are: {', '.join(names())}", field="skill")
    root = files(__package__ or "engramdb.skills")
    return Skill(name, (root / name / SKILL_FILE).read_bytes())


def shipped() -> list[Skill]:
    """Return every shipped skill, by name."""
    return [load(name) for name in names()]
