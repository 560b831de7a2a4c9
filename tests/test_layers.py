"""The layers, as a test: which part of EngramDB may import which.

Every import in every module of ``src/engramdb`` is read (inside functions and under
TYPE_CHECKING too, and ``importlib.import_module("...")`` calls): a rule broken anywhere fails
here, not in review a week later. Every part of the package has a rule (a new subpackage without
one fails ``test_every_part_of_the_package_has_a_rule``), and no rule names an exception.

    errors, clock, config, logs, metrics, lexical   import nothing of EngramDB's
    contract     errors and clock (the wire vocabulary, canonical JSON, ids)
    audit_chain  the contract (how an audit entry is chained: both core and storage need it)
    models       contract, errors, clock: no server part (the SDK depends on it alone)
    sdk          contract, models, errors, clock: never core, storage or the server
    integrations the SDK's layers and the SDK; of the server only ``engramdb.embedded``
    storage      the pure layers below it (contract, audit_chain, lexical): never core
    core         of storage, only the ports and their rows; never api, cli, jobs or the SDK
    jobs         core and the storage port; never api or cli
    embedded     this process as the server: core, jobs, the backend registry
    api          core, jobs, the storage port and registry; never a backend, the CLI or the SDK
    cli          any layer above, the backends only through the registry
    devtools     the models and the api (to read the registry and the OpenAPI document)
    drivers      sqlite3 only in storage/sqlite (and the SDK's own outbox file); psycopg and
                 pgvector only in storage/postgres
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
OWN = "engramdb"
PG_DRIVERS = ("psycopg", "psycopg_pool", "pgvector")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / OWN).rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def imported_names(source: str, package: str) -> set[str]:
    """Every module the source imports (``from a import b`` counts as ``a`` and ``a.b``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = (
                importlib.util.resolve_name("." * node.level + (node.module or ""), package)
                if node.level
                else node.module or ""
            )
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


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return imported_names(path.read_text(encoding="utf-8"), package)


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _own(names: set[str]) -> set[str]:
    return {n for n in names if _within(n, (OWN,))}


def _in_layer(layer: str) -> list[str]:
    return [m for m in MODULES if _part(m) == layer]


def _violations(layer: str, allowed: tuple[str, ...]) -> dict[str, list[str]]:
    """Imports of EngramDB modules from ``layer`` that are not within ``allowed``."""
    own_layer = f"{OWN}.{layer}"
    found: dict[str, list[str]] = {}
    for module in _in_layer(layer):
        bad = sorted(
            n
            for n in _own(imports_of(module)) - {OWN}
            if not _within(n, (own_layer, *allowed)) and not n.startswith(f"{OWN}.__")
        )
        if bad:
            found[module] = bad
    return found


def _ours(*names: str) -> tuple[str, ...]:
    return tuple(f"{OWN}.{name}" for name in names)


BASE = _ours("errors", "clock")
PURE = (*BASE, *_ours("contract", "audit_chain", "lexical"))
PORTS = _ours("storage.port", "storage.rows", "storage.knowledge.port", "storage.assist.port")
SERVICE = (*PURE, *_ours("models", "config", "metrics", "logs", "core", "jobs"), *PORTS, f"{OWN}.storage.registry")
RULES: dict[str, tuple[str, ...]] = {
    "errors": (),
    "clock": (),
    "config": (),
    "logs": (),
    "metrics": (),
    "lexical": (),
    "contract": BASE,
    "audit_chain": _ours("contract"),
    "models": (*BASE, f"{OWN}.contract"),
    "sdk": (*BASE, *_ours("contract", "models")),
    "integrations": (*BASE, *_ours("contract", "models", "sdk", "embedded")),
    "storage": PURE,
    "core": (*PURE, *_ours("models", "config", "metrics"), *PORTS),
    "jobs": (*PURE, *_ours("models", "config", "metrics", "core"), *PORTS),
    "embedded": SERVICE,
    "api": SERVICE,
    "cli": (*SERVICE, *_ours("api", "sdk", "integrations", "embedded")),
    "devtools": (*BASE, *_ours("contract", "models", "api", "core.auth")),
}


def _part(module: str) -> str:
    """The top-level part a module belongs to: ``engramdb.core.recall`` -> ``core``."""
    return module.split(".")[1] if "." in module else ""


def test_every_part_of_the_package_has_a_rule() -> None:
    parts = {_part(m) for m in MODULES} - {""}  # the package's own __init__ is the public facade
    assert {"core", "storage", "api", "cli", "jobs"} <= parts  # the walk found the package
    assert parts - set(RULES) == set()
    assert set(RULES) - parts == set()  # and no rule is left over from a part that went


@pytest.mark.parametrize("layer", sorted(RULES))
def test_each_layer_imports_only_what_it_may(layer: str) -> None:
    assert _in_layer(layer), f"no module in {layer}"  # the walk found the layer
    assert _violations(layer, RULES[layer]) == {}


def test_drivers_are_named_only_by_their_backend() -> None:
    for module in MODULES:
        names = imports_of(module)
        if not _within(module, (f"{OWN}.storage.postgres",)):
            assert not {n for n in names if _within(n, PG_DRIVERS)}, module
        if not _within(module, (f"{OWN}.storage.sqlite", f"{OWN}.sdk.outbox", f"{OWN}.sdk.session")):
            assert "sqlite3" not in names, module
    # Positive controls: the backends do name their drivers.
    assert "psycopg" in imports_of(f"{OWN}.storage.postgres.store")
    assert "sqlite3" in imports_of(f"{OWN}.storage.sqlite.connection")


def test_the_reading_sees_every_form_of_import() -> None:
    snippet = """
import sqlite3
from psycopg import sql
def late():
    from ..storage import postgres
    if TYPE_CHECKING:
        from engramdb.core.service import MemoryService
    importlib.import_module("pgvector.psycopg")
"""
    names = imported_names(snippet, "engramdb.sdk")
    assert {
        "sqlite3",
        "psycopg.sql",
        "engramdb.storage.postgres",
        "engramdb.core.service.MemoryService",
        "pgvector.psycopg",
    } <= names
    # The registry opens backends lazily, inside a function: the reading sees it.
    assert f"{OWN}.storage.sqlite.store" in imports_of(f"{OWN}.storage.registry")
    # And a rule flags a breach: core importing a backend would be reported.
    assert _within(f"{OWN}.storage.sqlite.store", (f"{OWN}.storage.sqlite",))
    assert not _within(f"{OWN}.storage.sqlite.store", RULES["core"])


@pytest.mark.parametrize(
    "module",
    [
        "engramdb.sdk",
        "engramdb.integrations.mem0",
        "engramdb.integrations.langgraph",
        "engramdb.integrations.claude_code",
        "engramdb.integrations.hermes.provider",
    ],
)
def test_importing_the_sdk_loads_no_server_part(module: str) -> None:
    probe = (
        f"import sys, {module}; from engramdb import Client; "
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'onnxruntime', 'fastapi', 'starlette', 'uvicorn', 'mcp', 'psycopg', 'sqlite_vec') "
        "or m.startswith(('engramdb.core', 'engramdb.storage', 'engramdb.api', 'engramdb.cli')))))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == ""
    server_probe = probe.replace(f"{module};", f"{module}, engramdb.core.service;")
    control = subprocess.run([sys.executable, "-c", server_probe], capture_output=True, text=True, check=True).stdout
    assert "numpy" in control and "engramdb.core.service" in control  # the probe does see a server import
