"""Size is a rule too: no module of src over 400 lines, no function over 60 (STYLE.md §10)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "engramdb"
MAX_FILE, MAX_FUNCTION = 400, 60


def test_no_module_is_over_400_lines() -> None:
    sizes = {str(p.relative_to(SRC)): len(p.read_text(encoding="utf-8").splitlines()) for p in SRC.rglob("*.py")}
    assert len(sizes) > 50  # the walk found the package
    assert {name: n for name, n in sizes.items() if n > MAX_FILE} == {}


def test_no_function_is_over_60_lines() -> None:
    lengths: dict[str, int] = {}
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lengths[f"{path.relative_to(SRC)}:{node.name}"] = (node.end_lineno or node.lineno) - node.lineno + 1
    assert max(lengths.values()) > 20  # the walk measured real functions
    assert {name: n for name, n in lengths.items() if n > MAX_FUNCTION} == {}
