"""Eval (and the bench and eval commands) reach storage only through the backend registry.

Every import in their source is read, including imports inside functions and
``importlib.import_module("...")`` calls: none may name a database driver or a backend package.
"""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import engramdb.eval

FORBIDDEN = ("sqlite3", "psycopg", "psycopg2", "psycopg_pool", "pgvector",
             "engramdb.storage.sqlite", "engramdb.storage.postgres")  # fmt: skip
CHECKED = sorted(
    [f"engramdb.eval.{m.name}" for m in pkgutil.walk_packages(engramdb.eval.__path__)]
    + ["engramdb.eval", "engramdb.cli.bench", "engramdb.cli.evaluate"]
)


def imported_names(source: str, package: str) -> set[str]:
    """Return every module name the source imports (``from a import b`` also counts as ``a.b``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) \
                if node.level else node.module or ""  # fmt: skip
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.add(first.value)
    return names


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in ("import_module", "__import__")


def forbidden(names: set[str]) -> list[str]:
    """Return the names that are, or are inside, a forbidden module."""
    return sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in FORBIDDEN))


def _source(module: str) -> tuple[str, str]:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    package = module if spec.submodule_search_locations else module.rpartition(".")[0]
    return Path(spec.origin).read_text(), package


@pytest.mark.parametrize("module", CHECKED)
def test_module_reaches_storage_only_through_the_registry(module: str) -> None:
    source, package = _source(module)
    assert forbidden(imported_names(source, package)) == [], module


def test_every_eval_module_is_checked() -> None:
    files = {p.stem for p in Path(engramdb.eval.__file__).parent.glob("*.py")} - {"__init__"}
    assert files and {f"engramdb.eval.{name}" for name in files} <= set(CHECKED)


@pytest.mark.parametrize("module", ["engramdb.eval.latency_config", "engramdb.eval.scale", "engramdb.eval.targets"])
def test_the_stores_eval_opens_come_from_the_registry(module: str) -> None:
    assert "engramdb.storage.registry" in imported_names(*_source(module))


def test_the_check_sees_every_form_of_import() -> None:
    """Positive controls: the same reading flags each way a backend can be reached."""
    snippet = """
import sqlite3
from psycopg import sql
def late():
    from engramdb.storage import postgres
    from engramdb.storage.sqlite.store import SQLiteStore
    importlib.import_module("pgvector.psycopg")
"""
    assert forbidden(imported_names(snippet, "engramdb.eval")) == [
        "engramdb.storage.postgres", "engramdb.storage.sqlite.store", "engramdb.storage.sqlite.store.SQLiteStore",
        "pgvector.psycopg", "psycopg", "psycopg.sql", "sqlite3",
    ]  # fmt: skip
    relative = "from ..storage.sqlite import store"
    assert forbidden(imported_names(relative, "engramdb.eval")) == [
        "engramdb.storage.sqlite", "engramdb.storage.sqlite.store"
    ]
    # The registry itself opens the backends lazily, inside a function: the reading sees it.
    assert "engramdb.storage.sqlite.store" in forbidden(imported_names(*_source("engramdb.storage.registry")))
    assert forbidden({"sqlite3x", "engramdb.storage.sqlite_like", "engramdb.storage.registry"}) == []
