"""The TypeScript modules keep the house's size rule: none over 400 lines (the generated schema aside)."""

from __future__ import annotations

from engramdb.devtools.node import WORKSPACE
from engramdb.devtools.typescript import SCHEMA

MAX_FILE = 400


def test_no_typescript_module_is_over_400_lines() -> None:
    modules = {
        p: len(p.read_text(encoding="utf-8").splitlines())
        for p in WORKSPACE.glob("packages/*/*/*.ts")
        if p != SCHEMA and "node_modules" not in p.parts and "dist" not in p.parts
    }
    assert len(modules) > 15  # the walk found the packages' sources and tests
    assert {str(p.relative_to(WORKSPACE)): n for p, n in modules.items() if n > MAX_FILE} == {}
