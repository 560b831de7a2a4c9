"""The layers, as a test: which part of EngramDB may import which.

Every import in every module of ``src/engramdb`` and of the harness (``bench/``: the
engramdb-bench package and the scripts) is read (inside functions and under TYPE_CHECKING too,
and ``importlib.import_module("...")`` calls): a rule broken anywhere fails here, not in review a
week later. Every part of the package has a rule (a new subpackage without one fails
``test_every_part_of_the_package_has_a_rule``), and no rule names an exception.

    errors, clock, tls, submodules, config, logs, metrics, traces, lexical   import nothing of EngramDB's
    contract     errors and clock (the wire vocabulary, canonical JSON, ids)
    audit_chain  the contract (how an audit entry is chained: both core and storage need it)
    models       contract, errors, clock: no server part (the SDK depends on it alone)
    sdk          contract, models, errors, clock: never core, storage or the server
    integrations the SDK's layers and the SDK; of the server only ``engramdb.embedded``
    storage      the pure layers below it (contract, audit_chain, lexical) and traces: never core
    core         of storage, only the ports and their rows; never api, cli, jobs or the SDK
    jobs         core and the storage port; never api or cli
    embedded     this process as the server: core, jobs, the backend registry
    api          core, jobs, the storage port and registry; never a backend, the CLI or the SDK
    cli          any layer above, the backends only through the registry
    devtools     the models, the settings, the api and the cli (the generated docs read them all)
    skills       errors (the shipped SKILL.md files and their installer: files, nothing of the server)
    drivers      sqlite3 only in storage/sqlite (and the SDK's own outbox file); psycopg and
                 pgvector only in storage/postgres
    harness      (engramdb_bench, bench/scripts) engramdb's public modules (the SDK and the integrations
                 built on it among them), stores only through the backend registry; and nothing of
                 engramdb names the harness (``engram`` finds its commands through their entry points)
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OWN = "engramdb"
HARNESS = "engramdb_bench"
SCRIPTS = "bench.scripts"  # the harness's scripts, run from a checkout: named by their path
PG_DRIVERS = ("psycopg", "psycopg_pool", "pgvector")


def _modules() -> dict[str, Path]:
    found = {}
    for base, package in ((ROOT / "src", OWN), (ROOT / "bench" / "src", HARNESS), (ROOT, SCRIPTS)):
        for path in sorted((base / package.replace(".", "/")).rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
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
    return [m for m in MODULES if _within(m, (OWN,)) and _part(m) == layer]


def _violations(layer: str, allowed: tuple[str, ...]) -> dict[str, list[str]]:
    """Imports of EngramDB modules from ``layer`` that are not within ``allowed``."""
    return _breaches(_in_layer(layer), (f"{OWN}.{layer}", *allowed))


def _breaches(modules: list[str], allowed: tuple[str, ...]) -> dict[str, list[str]]:
    """Imports of EngramDB modules from ``modules`` that are not within ``allowed``."""
    found: dict[str, list[str]] = {}
    for module in modules:
        bad = sorted(
            n for n in _own(imports_of(module)) - {OWN} if not _within(n, allowed) and not n.startswith(f"{OWN}.__")
        )
        if bad:
            found[module] = bad
    return found


def _harness() -> list[str]:
    return [m for m in MODULES if _within(m, (HARNESS, SCRIPTS))]


def _ours(*names: str) -> tuple[str, ...]:
    return tuple(f"{OWN}.{name}" for name in names)


BASE = _ours("errors", "clock", "tls", "submodules")
PURE = (*BASE, *_ours("contract", "audit_chain", "lexical"))
PORTS = _ours(
    "storage.port",
    "storage.rows",
    "storage.knowledge.port",
    "storage.assist.port",
    "storage.feed.port",
    "storage.fact_search.port",
)
SERVICE = (
    *PURE,
    *_ours("models", "config", "metrics", "traces", "logs", "core", "jobs"),
    *PORTS,
    f"{OWN}.storage.registry",
)
RULES: dict[str, tuple[str, ...]] = {
    "errors": (),
    "clock": (),
    "tls": (),
    "submodules": (),
    "config": (),
    "logs": (),
    "metrics": (),
    "traces": (),
    "lexical": (),
    "contract": BASE,
    "audit_chain": _ours("contract"),
    "models": (*BASE, f"{OWN}.contract"),
    "sdk": (*BASE, *_ours("contract", "models")),
    "integrations": (*BASE, *_ours("contract", "models", "sdk", "embedded")),
    "storage": (*PURE, f"{OWN}.traces"),
    "core": (*PURE, *_ours("models", "config", "metrics", "traces"), *PORTS),
    "jobs": (*PURE, *_ours("models", "config", "metrics", "traces", "core"), *PORTS),
    "embedded": SERVICE,
    "api": SERVICE,
    "cli": (*SERVICE, *_ours("api", "sdk", "integrations", "embedded", "skills")),
    "devtools": (*BASE, *_ours("contract", "models", "config", "api", "cli", "core.auth")),
    "skills": BASE,
}


def _part(module: str) -> str:
    """The top-level part a module belongs to: ``engramdb.core.recall`` -> ``core``."""
    return module.split(".")[1] if "." in module else ""


def test_every_part_of_the_package_has_a_rule() -> None:
    parts = {_part(m) for m in MODULES if _within(m, (OWN,))} - {""}  # the package's own __init__ is the public facade
    assert {"core", "storage", "api", "cli", "jobs"} <= parts  # the walk found the package
    assert parts - set(RULES) == set()
    assert set(RULES) - parts == set()  # and no rule is left over from a part that went


# What the harness may import of engramdb: stores only through the backend registry, never a backend.
HARNESS_MAY_IMPORT = (
    *PURE,
    f"{OWN}.models",
    f"{OWN}.config",
    f"{OWN}.core",
    f"{OWN}.jobs",
    f"{OWN}.storage.port",
    f"{OWN}.storage.rows",
    f"{OWN}.storage.registry",
    f"{OWN}.api",
    f"{OWN}.sdk",
    f"{OWN}.integrations",
)


@pytest.mark.parametrize("layer", sorted(RULES))
def test_each_layer_imports_only_what_it_may(layer: str) -> None:
    assert _in_layer(layer), f"no module in {layer}"  # the walk found the layer
    assert _violations(layer, RULES[layer]) == {}


def test_the_harness_imports_engramdb_only_through_its_public_modules() -> None:
    assert len(_harness()) > 40  # the walk found the package and the scripts
    assert {m for m in _harness() if m.startswith(SCRIPTS)} >= {f"{SCRIPTS}.ab_http", f"{SCRIPTS}.fusion_probe"}
    assert _breaches(_harness(), HARNESS_MAY_IMPORT) == {}
    # Positive controls: the harness does open stores, through the registry, and a backend would be flagged.
    assert f"{OWN}.storage.registry.open_store" in imports_of(f"{HARNESS}.load")
    registry = f"{OWN}.storage.registry"  # it imports the backends: in the harness, a breach
    assert {f"{OWN}.storage.sqlite.store", f"{OWN}.storage.postgres.store"} <= set(
        _breaches([registry], HARNESS_MAY_IMPORT)[registry]
    )


def test_nothing_of_engramdb_names_the_harness() -> None:
    runtime = [m for m in MODULES if _within(m, (OWN,))]
    assert len(runtime) > 100  # the walk found the runtime
    for module in runtime:
        assert not {n for n in imports_of(module) if _within(n, (HARNESS,))}, module
        # Not even as text: an import built at run time, or a name in a message, would tie them again.
        assert HARNESS not in MODULES[module].read_text(encoding="utf-8"), module
    # Positive controls: the reading sees the harness imported, in a snippet and in the harness itself.
    snippet = """
from engramdb_bench.cli import bench
def late():
    import engramdb_bench.runner
    importlib.import_module("engramdb_bench.cli.evaluate")
"""
    names = imported_names(snippet, f"{OWN}.cli")
    assert {f"{HARNESS}.cli.bench", f"{HARNESS}.runner", f"{HARNESS}.cli.evaluate"} <= names
    assert f"{HARNESS}.cli.bench_faults.faults" in imports_of(f"{HARNESS}.cli.bench")
    assert HARNESS in MODULES[f"{HARNESS}.cli.bench"].read_text(encoding="utf-8")


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
    # One process: what the import loaded, then (the positive control) what a server import adds,
    # listed by the same expression.
    listing = (
        "','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'onnxruntime', 'fastapi', 'starlette', 'uvicorn', 'mcp', 'psycopg', 'sqlite_vec') "
        "or m.startswith(('engramdb.core', 'engramdb.storage', 'engramdb.api', 'engramdb.cli'))"
        " or m == 'engramdb.models.operations.registry'))"  # every operation's models: an SDK call needs its area's
    )
    probe = (
        f"import sys, {module}; from engramdb import Client; print({listing}); "
        f"import engramdb.core.service; from engramdb.models.operations import OPERATIONS; print({listing})"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded, control = done.stdout.split("\n")[:2]
    assert loaded == ""
    assert "numpy" in control and "engramdb.core.service" in control  # the probe does see a server import
    assert "engramdb.models.operations.registry" in control  # and the whole registry, once it is named


def test_starting_the_cli_or_the_server_loads_no_part_it_does_not_run(tmp_path: Path) -> None:
    # `engram` with its whole command tree built loads no storage, service or model code (a command
    # on the data folder loads them when it runs); an app made and started loads no MCP SDK (its
    # first /mcp request does). The controls: what a local command and an MCP request load.
    probe = """
import sys, tempfile
from pathlib import Path
def loaded(*roots): return sorted(m for m in sys.modules if m.split('.')[0] in roots or m.startswith(roots))
from engramdb.cli.main import command
command()
print(loaded('numpy', 'onnxruntime', 'fastapi', 'mcp', 'engramdb.core', 'engramdb.storage'))
from engramdb.cli.context import Local
from engramdb.models.operations import BY_NAME
Local(tempfile.mkdtemp(), 'default').service(BY_NAME['list_scopes'])
print(len(loaded('numpy', 'engramdb.core.service', 'engramdb.storage.sqlite')) > 2)
from engramdb.api.rest import create_app
from engramdb.config import Settings
create_app(Settings(home=Path(tempfile.mkdtemp()), embedder='hashing'))
print(loaded('mcp'))
from engramdb.api.mcp.transports import http_endpoint
print(len(loaded('mcp')) > 10)
"""
    folders = {**os.environ, "TMPDIR": str(tmp_path)}  # the probe's data folders are this test's
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=folders)
    assert done.stdout.split("\n")[:4] == ["[]", "True", "[]", "True"], done.stdout
