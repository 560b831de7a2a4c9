"""Every example in a skill runs against a real server: its shell and Python blocks as a reader runs
them, its MCP calls through a real MCP client, each answering what the skill shows after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from engramdb.skills import catalog
from tests.docs.blocks import read
from tests.docs.reader import Reader
from tests.skills.pages import mcp_call, page_name, skill_page
from tests.skills.runner import SkillRun


@pytest.mark.parametrize("skill", catalog.names())
def test_a_skills_examples_run_in_order_against_a_real_server(skill: str, tmp_path: Path) -> None:
    page = skill_page(skill)
    assert page.problems == []
    with Reader(tmp_path) as reader:
        run = SkillRun(reader)
        run.run(page)
        assert [str(b) for b in reader.ran] == [
            str(b) for b in page.run
        ]  # each shell and Python block ran once, in order
        assert run.calls == [call[0] for call in map(mcp_call, page.blocks) if call]


@pytest.mark.parametrize("skill", catalog.names())
def test_no_example_of_a_skill_is_left_unrun(skill: str) -> None:
    page = skill_page(skill)
    runnable = [b for b in page.blocks if mcp_call(b) or b.language in ("bash", "python")]
    assert runnable, f"{skill} has no example"
    assert [str(b) for b in page.blocks if b.not_run is not None] == []  # every example runs, none excused
    for block in page.blocks:
        if block.language == "json" and mcp_call(block) is None:
            assert '"tool"' not in block.code, f"{block}: a tool call must be {{'tool': ..., 'arguments': {{...}}}}"
    print(f"{page_name(skill)}: {len(page.run)} shell/Python blocks, {sum(1 for b in runnable if mcp_call(b))} MCP")


PENDING = """```json
{"tool": "remember_fact", "arguments": {"subject": "user", "kind": "name", "text": "The user is Ana."}}
```

```text
status active
```
"""
REFUSED = """```json
{"tool": "retract_fact", "arguments": {"fact_id": "nope", "reason": "no longer true"}}
```
"""


def test_a_call_that_answers_otherwise_than_shown_fails(tmp_path: Path) -> None:
    with Reader(tmp_path) as reader:
        run = SkillRun(reader)
        with pytest.raises(AssertionError, match="did not answer 'status active'"):
            run.run(read("docs/made-up.md", PENDING))  # the fact waits for review: pending_review, not active
        assert run.answers["remember_fact"]["status"] == "pending_review"  # the call itself ran
        with pytest.raises(AssertionError, match="retract_fact failed: invalid_input"):
            run.run(read("docs/made-up.md", REFUSED))  # an error the page does not show fails the example
        shown = REFUSED + "\n```text\ninvalid_input: …\n```\n"
        run.run(read("docs/made-up.md", shown))  # the same error, shown, is what the example means
