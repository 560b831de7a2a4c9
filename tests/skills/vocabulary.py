"""What exists, read from the code: the tools, arguments, commands, operations, settings and names a
skill may mention. Nothing here is a list kept by hand: each set is read off the registry, the
``engram`` application, ``Settings`` or the SDK's classes, so a rename there changes it here."""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import inspect
import pkgutil
import re
import textwrap
import types
from typing import Any, Literal, Union, get_args, get_origin

import typer
from pydantic import BaseModel

import engramdb.contract
import engramdb.models
from engramdb import sdk
from engramdb.cli.main import app
from engramdb.contract import format as formatting
from engramdb.core.knowledge import where
from engramdb.errors import InvalidInputError
from engramdb.integrations.hermes.provider import TOOLS as HERMES_TOOLS
from engramdb.models import policy
from engramdb.models.operations import OPERATIONS
from engramdb.sdk.start import DeliveryState
from tests.docs.blocks import ROOT
from tests.docs.test_completeness import setting_variables

# The SDK classes an adapter works with: their methods, parameters, fields and attributes.
SDK_CLASSES = (
    sdk.MemorySession,
    sdk.HostContext,
    sdk.OutboxSettings,
    sdk.Outbox,
    sdk.Client,
    sdk.RecallOutcome,
    DeliveryState,
)
# Where a class name a skill mentions may come from: EngramDB's public modules and its integrations.
PUBLIC_MODULES = (
    "engramdb",
    "engramdb.sdk",
    "engramdb.errors",
    "engramdb.integrations.hermes.provider",
    "engramdb.integrations.claude_code",
    "engramdb.integrations.langgraph",
    "engramdb.integrations.mem0",
)
_VARIABLE = re.compile(r"[\"'](ENGRAM_[A-Z0-9_]+)[\"']")


@functools.cache
def tools() -> dict[str, frozenset[str]]:
    """Every MCP tool and the names of its arguments."""
    return {op.mcp.tool: frozenset(name for name, _ in op.mcp.args) for op in OPERATIONS if op.mcp}


@functools.cache
def operations() -> frozenset[str]:
    return frozenset(op.name for op in OPERATIONS)


@functools.cache
def routes() -> frozenset[str]:
    """Every REST route, as ``POST /v1/facts``."""
    return frozenset(f"{op.method} {path}" for op in OPERATIONS for path in (op.path, *op.former_paths))


@functools.cache
def command_line() -> Any:
    """The ``engram`` application as a command group (typer's own click: commands, params)."""
    command = typer.main.get_command(app)
    assert hasattr(command, "commands")
    return command


@functools.cache
def command_words() -> frozenset[str]:
    """The name of every command and group of ``engram``, and of every option (without dashes)."""
    words: set[str] = set()

    def walk(command: Any) -> None:
        for param in command.params:
            words.update(opt.lstrip("-") for opt in (*param.opts, *param.secondary_opts))
        for name, sub in getattr(command, "commands", {}).items():
            words.add(name)
            walk(sub)

    walk(command_line())
    return frozenset(words)


@functools.cache
def variables() -> frozenset[str]:
    """Every ``ENGRAM_*`` variable: a setting's, or one the code reads by name (``ENGRAM_URL``, ...)."""
    read = {m for path in (ROOT / "src").rglob("*.py") for m in _VARIABLE.findall(path.read_text(encoding="utf-8"))}
    return frozenset(setting_variables()) | frozenset(read)


@functools.cache
def sdk_names() -> frozenset[str]:
    """The public names of the SDK's classes: methods, their parameters, fields, instance attributes."""
    names: set[str] = set()
    for cls in SDK_CLASSES:
        names |= {n for n in dir(cls) if not n.startswith("_")}
        if dataclasses.is_dataclass(cls):
            names |= {f.name for f in dataclasses.fields(cls)}
        for member in (cls.__init__, *(m for n, m in vars(cls).items() if not n.startswith("_"))):
            if callable(member):
                names |= set(inspect.signature(member).parameters) - {"self", "cls"}
        names |= _assigned_attributes(cls)
    return frozenset(names)


def _assigned_attributes(cls: type) -> set[str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
    }


@functools.cache
def models() -> tuple[type[BaseModel], ...]:
    """Every pydantic model the wire vocabulary declares (engramdb.contract and engramdb.models)."""
    found: dict[str, type[BaseModel]] = {}
    for package in (engramdb.contract, engramdb.models):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            for value in vars(importlib.import_module(info.name)).values():
                if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__.startswith("engramdb"):
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return tuple(found.values())


@functools.cache
def wire_fields() -> frozenset[str]:
    """Every field of the wire models, by its Python name and by its alias (``merge_by``, ``mergeBy``)."""
    return frozenset(
        name for model in models() for key, field in model.model_fields.items() for name in (key, field.alias) if name
    )


@functools.cache
def values() -> frozenset[str]:
    """The words the models and the lifecycle declare as values: statuses, trust classes, origins, kinds."""
    found = {v for model in models() for field in model.model_fields.values() for v in literals(field.annotation)}
    for module in (engramdb.contract.events, policy):
        found |= {v for value in vars(module).values() for v in literals(value)}
    found |= set(formatting.RETIRED | formatting.UNREVIEWED) | {"active"}
    found |= {*policy.DEFAULT_MULTI_VALUED, *policy.TRUST_CLASSES, *policy.ORIGINS}
    return frozenset(found)


def literals(annotation: Any) -> set[str]:
    origin = get_origin(annotation)
    if origin is Literal:
        return {a for a in get_args(annotation) if isinstance(a, str)}
    if origin in (Union, types.UnionType, list, tuple, dict) or str(origin).endswith("Annotated"):
        return {v for a in get_args(annotation) for v in literals(a)}
    return set()


@functools.cache
def hermes_tools() -> frozenset[str]:
    """The tools EngramDB's Hermes provider gives a model."""
    return frozenset(str(tool["name"]) for tool in HERMES_TOOLS)


@functools.cache
def class_names() -> frozenset[str]:
    """Every class, or public name, of EngramDB's public modules (what an adapter imports or sees)."""
    names: set[str] = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        names |= set(getattr(module, "__all__", ()))
        names |= {n for n, v in vars(module).items() if isinstance(v, type) and not n.startswith("_")}
    return frozenset(names)


def importable(dotted: str) -> bool:
    """True when ``dotted`` names a module of EngramDB, or a name in one."""
    try:
        importlib.import_module(dotted)
        return True
    except ImportError:
        module, _, name = dotted.rpartition(".")
        try:
            return hasattr(importlib.import_module(module), name)
        except ImportError:
            return False


def where_operator(operator: str) -> bool:
    """True when the where-language's parser knows ``operator`` (at the top, on a property or a label)."""
    probes: list[dict[str, Any]] = [{"title": {operator: "x"}}, {operator: [{"title": "x"}]}, {"TASK": {operator: "X"}}]
    for probe in probes:
        try:
            where.parse(probe)
            return True
        except InvalidInputError as error:
            if "unknown operator" not in error.message and "is neither a property" not in error.message:
                return True  # refused for its operand: the operator itself is known
    return False
