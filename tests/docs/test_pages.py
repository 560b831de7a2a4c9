"""The pages' code blocks run, in order, on a fresh data folder against a real server.

How blocks are marked is in ``tests/docs/blocks.py``; how they run, in ``tests/docs/reader.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.docs.blocks import ROOT, Page, pages, read
from tests.docs.reader import Reader
from tests.mcp.helpers import ok

WALKTHROUGHS = [name for name in pages() if name != "README.md" and read(name).run]
COMMAND_1 = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/engram serve"
COMMAND_2 = "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/pytest"


def _follow(reader: Reader, page: Page) -> None:
    """Run the page a page follows, then its own blocks; check each ran once, in order."""
    chain = [read(page.follows), page] if page.follows else [page]
    for each in chain:
        for block in each.run:
            reader.run(block)
    assert reader.ran == [b for each in chain for b in each.run]


def test_the_readme_quickstart_runs_in_order_and_its_mcp_config_connects(tmp_path: Path) -> None:
    readme = read("README.md")
    with Reader(tmp_path) as reader:
        _follow(reader, readme)
        [config] = [json.loads(b.code) for b in readme.blocks if b.language == "json" and "mcpServers" in b.code]
        server = config["mcpServers"]["engramdb"]
        url = server["url"].replace("127.0.0.1:8377", reader.address)
        headers = {
            k: v.replace("<the key in ENGRAM_KEY>", reader.env["ENGRAM_KEY"]) for k, v in server["headers"].items()
        }

        async def recall() -> str:
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    return ok(await client.call_tool("recall", {"query": "what does the user drink?"}))

        assert "The user prefers green tea" in anyio.run(recall)  # what the quickstart wrote, in its scope


@pytest.mark.parametrize("name", WALKTHROUGHS)
def test_a_pages_blocks_run_in_order_on_a_fresh_folder(name: str, tmp_path: Path) -> None:
    with Reader(tmp_path) as reader:
        _follow(reader, read(name))


def test_the_readme_starts_with_the_two_commands_and_runs_its_quickstart() -> None:
    readme = read("README.md")
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    first, second = readme.blocks[:2]
    assert first.line > lines.index("## Quickstart") and [first.language, second.language] == ["bash", "bash"]
    assert [first.code.strip(), second.code.strip()] == [COMMAND_1, COMMAND_2]
    assert first.not_run and second.not_run  # installs, a server the test starts itself, the suite
    assert len(readme.run) >= 4, "the quickstart's key, writes, recall and SDK blocks run"
    assert any(b.language == "python" for b in readme.run)


def test_the_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move the detail to docs/"


@pytest.mark.parametrize("name", pages())
def test_every_block_runs_or_says_why_not(name: str) -> None:
    page = read(name)
    assert page.problems == []
    if page.follows:
        assert read(page.follows).run, f"{name} follows {page.follows}, which runs nothing"
    print(f"{name}: {len(page.run)} run, {len(page.skipped)} not run")
    for block in page.skipped:
        print(f"  {block} not run: {block.not_run}")


def test_a_block_that_is_neither_run_nor_marked_is_reported() -> None:
    text = "\n".join(
        [
            "<!-- not run: needs a model -->",
            "```bash",
            "ollama pull x",
            "```",
            "```",
            "echo untagged",
            "```",
            "<!-- not run: -->",
            "```python",
            "print(1)",
            "```",
            "<!-- not run: a reason -->",
            "```json",
            "{}",
            "```",
            "~~~bash",
            "echo hidden",
            "~~~",
            "```bash",
            "echo runs",
            "```",
            "```text",
            "runs",
            "```",
        ]
    )
    page = read("docs/made-up.md", text)
    assert [str(b) for b in page.run] == ["docs/made-up.md:19"] and page.run[0].output == "runs\n"
    assert [b.not_run for b in page.skipped] == ["needs a model", ""]
    assert [problem.split(": ", 1)[0] for problem in page.problems] == [
        "docs/made-up.md:5",  # untagged
        "docs/made-up.md:9",  # a marker without a reason
        "docs/made-up.md:13",  # a marker on a block that never runs
        "docs/made-up.md:16",  # a ~~~ fence
    ]
    assert "never closed" in read("docs/made-up.md", "```bash\necho open\n").problems[0]


def test_a_block_fails_on_its_exit_status_or_on_output_it_does_not_print(tmp_path: Path) -> None:
    text = (
        "```bash\nexport SHOWN=carried\n```\n\n"
        '```bash\necho "$SHOWN" 127.0.0.1:8377\n```\n\n```text\ncarried 127.0.0.1:…\n```\n\n'
        "```python\nprint('something else')\n```\n\n```text\nwhat the page shows\n```\n\n"
        "```bash\nfalse\necho 'not reached'\n```\n"
    )
    exported, echoed, other, failing = read("docs/made-up.md", text).run
    with Reader(tmp_path) as reader:
        reader.run(exported)
        assert reader.run(echoed) == f"carried {reader.address}\n"  # an export carries over; the port is the server's
        with pytest.raises(AssertionError, match="did not print 'what the page shows'"):
            reader.run(other)
        with pytest.raises(AssertionError, match="exited 1"):
            reader.run(failing)
