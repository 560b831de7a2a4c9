"""Size is a rule too: no module over 400 lines, no function over 60 (STYLE.md §10), in the runtime
(src/engramdb) and in the harness (bench/: its package and its scripts)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_FILE, MAX_FUNCTION = 400, 60
# Each root, with how many modules the walk must find there (a wrong path finds none).
ROOTS = {"src/engramdb": 50, "bench/src/engramdb_bench": 40, "bench/scripts": 3}


def _modules(root: str) -> dict[str, str]:
    found = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in (ROOT / root).rglob("*.py")}
    assert len(found) > ROOTS[root]  # the walk found the package
    return found


@pytest.mark.parametrize("root", sorted(ROOTS))
def test_no_module_is_over_400_lines(root: str) -> None:
    sizes = {name: len(text.splitlines()) for name, text in _modules(root).items()}
    assert {name: n for name, n in sizes.items() if n > MAX_FILE} == {}


@pytest.mark.parametrize("root", sorted(ROOTS))
def test_no_function_is_over_60_lines(root: str) -> None:
    lengths: dict[str, int] = {}
    for name, text in _modules(root).items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lengths[f"{name}:{node.name}"] = (node.end_lineno or node.lineno) - node.lineno + 1
    assert max(lengths.values()) > 20  # the walk measured real functions
    assert {name: n for name, n in lengths.items() if n > MAX_FUNCTION} == {}
