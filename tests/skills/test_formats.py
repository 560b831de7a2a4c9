"""Each runtime reads each skill's front matter whole: as Claude Code, Codex and OpenClaw document it
and as Hermes' own parser reads it (tests/skills/formats.py); and each format reports what its
runtime would refuse or cut."""

from __future__ import annotations

import pytest

from engramdb.skills import catalog
from tests.skills.formats import FORMATS

FOLDED = "---\nname: engramdb-memory\ndescription: >\n  Use EngramDB\n  well.\n---\n# body\n"
UPPER = "---\nname: EngramDB-Memory\ndescription: Use EngramDB well.\n---\n"
LONG = "---\nname: engramdb-memory\ndescription: " + "y" * 1025 + "\n---\n"


@pytest.mark.parametrize("target", sorted(FORMATS))
@pytest.mark.parametrize("skill", catalog.names())
def test_every_runtime_reads_every_skill_whole(target: str, skill: str) -> None:
    assert FORMATS[target](catalog.load(skill).text, skill) == []


def test_each_runtimes_format_reports_what_it_would_refuse_or_cut() -> None:
    # A folded description is YAML every YAML reader takes, but not OpenClaw's single-line keys.
    assert FORMATS["openclaw"](FOLDED, "engramdb-memory") == ["line 4 continues a key", "line 5 continues a key"]
    assert [FORMATS[t](FOLDED, "engramdb-memory") for t in ("claude-code", "codex", "hermes")] == [[], [], []]
    for target in ("claude-code", "codex", "openclaw"):
        assert FORMATS[target](UPPER, "engramdb-memory") == [
            "name 'EngramDB-Memory': lowercase letters, digits and hyphens, at most 64",
            "name 'EngramDB-Memory' is not the folder's 'engramdb-memory'",
        ]
        assert FORMATS[target](LONG, "engramdb-memory") == ["description: a string of 1 to 1,024 characters"]
    assert FORMATS["hermes"](UPPER, "engramdb-memory") == ["Hermes reads the name 'EngramDB-Memory'"]
    assert FORMATS["hermes"](LONG, "engramdb-memory") == ["Hermes reads no description, or cuts it"]
