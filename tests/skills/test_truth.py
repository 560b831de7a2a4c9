"""The skills say only what is true: every tool, argument, command, operation, setting and name they
mention exists (tests/skills/truth.py), their front matter is what every runtime reads, and a
made-up name, or a tool renamed in the registry, is reported."""

from __future__ import annotations

import pytest

from engramdb.skills import catalog
from engramdb.skills.frontmatter import problems as frontmatter_problems
from tests.skills import vocabulary as known
from tests.skills.truth import problems

MADE_UP = """---
name: made-up
description: A skill that names things EngramDB does not have.
---

Call `remember_facts` with a `subject`; call `remember_fact` with `subjekt`; call `retract_fact`
with its `fact_id` and a `limit`. Run `engram factz list`, `engram facts list --subjekt user` and
`engram skills install --target codex --force`. Set `ENGRAM_NO_SUCH_SETTING`. The operation
`write_facts` answers `POST /v1/factz`; `POST /v1/facts` exists. Filter with `$contain` or
`$contains`, and write with `mergBy` or `mergeBy`. Import `MemorySessions` from
`engramdb.sdk.sesion`; `MemorySession` and `engramdb.sdk.session` exist, and
`after_turn(user, assistant, ok=)` but not `after_turns(user)`.

```bash
engram review aprove 1234 && engram review approve 1234 --reasn "typo"
```

```json
{"tool": "remember_facts", "arguments": {"subject": "user"}}
```

```json
{"tool": "find_records", "arguments": {"labelz": ["TASK"], "where": {"status": {"$foo": 1}}}}
```
"""


@pytest.mark.parametrize("skill", catalog.names())
def test_everything_a_skill_names_exists(skill: str) -> None:
    assert problems(catalog.load(skill).text) == []


def test_a_made_up_name_of_each_kind_is_reported() -> None:
    found = problems(MADE_UP)
    assert "`remember_facts` is no tool, argument, operation, SDK name or value" in found  # a tool
    assert "`subjekt` is no tool, argument, command, SDK name or value" in found  # an argument
    assert "`limit` is not an argument of `retract_fact`" in found  # an argument of another tool
    assert "`engram` has no command 'factz'" in found  # a command
    assert "`engram facts list` has no option --subjekt" in found  # an option
    assert "`ENGRAM_NO_SUCH_SETTING` is no setting or variable EngramDB reads" in found  # a setting
    assert "`write_facts` is no tool, argument, operation, SDK name or value" in found  # an operation
    assert "`POST /v1/factz` is no route of the server" in found
    assert "`$contain` is no operator of the where-language" in found
    assert "`mergBy` is no field of the wire models" in found
    assert "`MemorySessions` is no class of EngramDB's public modules" in found
    assert "`engramdb.sdk.sesion` is no module or name of EngramDB" in found
    assert "`after_turns` is no tool, argument, operation, SDK name or value" in found  # a method
    assert "`engram review` has no command 'aprove'" in found  # in a shell block
    assert "`engram review approve` has no option --reasn" in found
    assert "skill.md:18: `remember_facts` is no MCP tool" in found  # an MCP call
    assert "skill.md:22: `labelz` is not an argument of `find_records`" in found
    assert any(p.startswith("skill.md:22: the where is refused: where.status.$foo: unknown operator") for p in found)
    # And nothing that exists is reported: the true half of each sentence passes.
    assert not [p for p in found if any(f"`{ok}`" in p for ok in ("subject", "fact_id", "$contains", "mergeBy", "ok"))]
    assert len(found) == len(set(found)) == 18, found  # each once


def test_a_tool_renamed_in_the_registry_fails_the_skills_that_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = dict(known.tools())
    tools["store_fact"] = tools.pop("remember_fact")
    monkeypatch.setattr(known, "tools", lambda: tools)
    found = problems(catalog.load("engramdb-memory").text)
    assert "`remember_fact` is no tool, argument, operation, SDK name or value" in found
    assert any(p.endswith("`remember_fact` is no MCP tool") for p in found)


def test_a_setting_gone_from_the_code_fails_the_skills_that_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    remaining = known.variables() - {"ENGRAM_URL"}
    monkeypatch.setattr(known, "variables", lambda: remaining)
    assert "`ENGRAM_URL` is no setting or variable EngramDB reads" in problems(catalog.load("engramdb-records").text)


@pytest.mark.parametrize("skill", catalog.names())
def test_a_skills_front_matter_is_one_key_a_line_with_its_folders_name(skill: str) -> None:
    shipped = catalog.load(skill)
    assert frontmatter_problems(shipped.text, skill) == []
    assert shipped.description and skill.startswith("engramdb-")


def test_front_matter_mistakes_are_reported() -> None:
    text = "---\nname: Engramdb_Memory\ndescription: Use it: when asked\n  and more\n---\n# body\n"
    assert frontmatter_problems(text, "engramdb-memory") == [
        "line 4: not one 'key: value' line",
        "name 'Engramdb_Memory': 1 to 64 lowercase letters, digits and single hyphens",
        "name 'Engramdb_Memory' is not its folder's name 'engramdb-memory'",
        "description: YAML would not read this plain value as written (': ', ' #' or a leading 'U')",
    ]
    long = "---\nname: x\ndescription: " + "y" * 1025 + "\n---\n"
    assert frontmatter_problems(long, "x") == ["description: 1 to 1024 characters, not 1025"]
    assert frontmatter_problems("# no front matter\n", "x")[0].startswith("no front matter")
