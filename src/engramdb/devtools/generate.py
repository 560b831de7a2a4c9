"""Code and docs generated from the operation registry; ``--check`` fails when they are stale.

    python -m engramdb.devtools.generate          # rewrite the files
    python -m engramdb.devtools.generate --check  # exit 1, naming the stale files

Writes the typed SDK methods (``src/engramdb/sdk/methods/``, a module per area), the API reference
(``docs/api.md``), the CLI reference (``docs/cli.md``, from the ``engram`` application), the
configuration reference (``docs/configuration.md``, from ``engramdb.config.Settings``) and the tables
of ``docs/rest.md`` and ``docs/mcp.md`` (between their ``ops:rest`` and ``ops:mcp`` markers).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import engramdb.contract
import engramdb.models
from engramdb.devtools.commands import cli_reference
from engramdb.devtools.configuration import configuration_reference
from engramdb.devtools.reference import api_reference, mcp_table, rest_table, with_table
from engramdb.devtools.signatures import signature_of
from engramdb.models import operations
from engramdb.models.operation import Operation

ROOT = Path(__file__).resolve().parents[3]
# The SDK's methods, in one module per area (by the operations' tags).
AREAS: dict[str, tuple[str, ...]] = {
    "memory": ("service", "memories", "recall"),
    "lifecycle": ("lifecycle",),
    "governance": ("scopes", "review", "audit", "policy", "keys", "usage"),
    "knowledge": ("knowledge",),
    "aging": ("erasure", "aging", "jobs"),
    "assist": ("assist",),
    "integrations": ("integrations",),
    "feed": ("changes", "webhooks"),
}
HEADER = '''"""Typed SDK methods for the {area} operations, generated from ``engramdb.models.operations``.

Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.
"""

# ruff: noqa: E501, F401 (mypy needs each model's module: through the package alone it reads Any)
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar

{packages}
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation
from engramdb.sdk.operations import inputs_for

# The models are annotations only, each named by its module: typing.get_type_hints imports it then (the
# packages' __getattr__), and an area's first call imports its operations, so the SDK imports none up front.
if TYPE_CHECKING:
{imports}

__all__ = ["Async{Area}Methods", "Literal", "Sync{Area}Methods"]

T = TypeVar("T")
'''
MODEL_PACKAGES = (engramdb.contract, engramdb.models)  # where the types of the operations' inputs are declared
LINE_LENGTH = 120  # ruff's, in pyproject.toml


# Where each operation's typed constant is declared (its module's alias in the generated files).
DECLARED = {
    f"{info.name}_ops": importlib.import_module(f"{operations.__name__}.{info.name}")
    for info in pkgutil.iter_modules(operations.__path__)
    if info.name not in ("common", "registry")
}


@functools.cache
def _homes() -> dict[str, str]:
    """Every class the model packages declare -> the module that declares it."""
    homes: dict[str, str] = {}
    for package in MODEL_PACKAGES:
        for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
            for name, value in vars(importlib.import_module(info.name)).items():
                if isinstance(value, type) and value.__module__ == info.name:
                    homes[name] = info.name
    return homes


def _home_of(name: str) -> str:
    return _homes()[name]


def _module_of(alias: str) -> str:
    return DECLARED[alias].__name__.rsplit(".", 1)[1]


def _constant(op: Operation[Any]) -> str:
    return next(
        f"{alias}.{name}" for alias, module in DECLARED.items() for name, value in vars(module).items() if value is op
    )


def _qualified(text: str, names: set[str]) -> str:
    """``text`` with each model named by its module (``models.recall.RecallResponse``)."""
    if not names:
        return text
    pattern = r"\b(" + "|".join(sorted(names, key=len, reverse=True)) + r")\b"
    return re.sub(pattern, lambda m: f"{_home_of(m[1]).removeprefix('engramdb.')}.{m[1]}", text)


def _method(op: Operation[Any], models: set[str], *, asynchronous: bool) -> str:
    sig = signature_of(op, models)
    sig = dataclasses.replace(
        sig, params=[_qualified(p, models) for p in sig.params], returns=_qualified(sig.returns, models)
    )
    query = "{" + ", ".join(f'"{n}": {n}' for n, _ in sig.query) + "}"
    path = "(" + ", ".join(sig.path) + ("," if len(sig.path) == 1 else "") + ")"
    const = _constant(op)
    call = f"self.call({const}, inputs_for({const}, {path}, {sig.body or 'None'}, {query}))"
    head = f"    {'async ' if asynchronous else ''}def {op.name}("
    flat = f"{head}{', '.join(['self', *sig.params])}) -> {sig.returns}:"
    if len(flat) > 120:
        flat = f"{head}\n        " + ",\n        ".join(["self", *sig.params]) + f",\n    ) -> {sig.returns}:"
    alias = const.split(".")[0]  # the area's operations, imported by the first call (the registry's __init__)
    lines = [
        flat,
        f'        """{op.summary}"""',
        f"        from engramdb.models.operations import {_module_of(alias)} as {alias}",
        "",
    ]
    awaited = f"await {call}" if asynchronous else call
    lines += [f"        {awaited}", "        return None"] if op.output is None else [f"        return {awaited}"]
    return "\n".join(lines)


def _area(area: str, ops: list[Operation[Any]]) -> str:
    """The source of ``engramdb.sdk.methods.<area>``."""
    models: set[str] = set()
    sync = [_method(op, models, asynchronous=False) for op in ops]
    asynchronous = [_method(op, models, asynchronous=True) for op in ops]
    by_module: dict[str, list[str]] = {}
    for name in sorted(models):
        by_module.setdefault(_home_of(name), []).append(name)
    imports = [f"    import {module}" for module in by_module]
    packages = sorted({module.split(".")[1] for module in by_module})
    head = HEADER.format(
        area=area, Area=area.title(), imports="\n".join(imports), packages=f"from engramdb import {', '.join(packages)}"
    )
    out = head + f'\n\nclass Sync{area.title()}Methods:\n    """The {area} operations as blocking methods."""\n\n'
    out += "    def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's\n"
    out += "        raise NotImplementedError\n\n" + "\n\n".join(sync) + "\n"
    out += f'\n\nclass Async{area.title()}Methods:\n    """The {area} operations as coroutine methods."""\n\n'
    out += "    async def call(self, op: Operation[T], inputs: Inputs) -> T:  # pragma: no cover - the client's\n"
    out += "        raise NotImplementedError\n\n" + "\n\n".join(asynchronous) + "\n"
    return out


def sdk_methods() -> dict[str, str]:
    """The modules of ``engramdb.sdk.methods``: one per area, and the package joining them."""
    by_area: dict[str, list[Operation[Any]]] = {area: [] for area in AREAS}
    for op in operations.OPERATIONS:
        area = next((a for a, tags in AREAS.items() if op.tag in tags), None)
        if area is None:
            raise SystemExit(f"operation {op.name} has tag {op.tag!r}, which no area of AREAS lists")
        by_area[area].append(op)
    modules = {f"{area}.py": _formatted(_area(area, ops)) for area, ops in by_area.items()}
    names = [a.title() for a in AREAS]
    imports = "\n".join(
        f"from engramdb.sdk.methods.{a} import Async{a.title()}Methods, Sync{a.title()}Methods" for a in sorted(AREAS)
    )
    modules["__init__.py"] = (
        '"""Typed SDK methods, one per operation, generated from ``engramdb.models.operations``.\n\n'
        'Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.\n"""\n\n'
        f"from __future__ import annotations\n\n{imports}\n\n"
        '__all__ = ["AsyncMethods", "SyncMethods"]\n\n\n'
        f"class SyncMethods(\n{''.join(f'    Sync{n}Methods,{chr(10)}' for n in names)}):\n"
        '    """Every operation as a blocking method (``Client``)."""\n\n\n'
        f"class AsyncMethods(\n{''.join(f'    Async{n}Methods,{chr(10)}' for n in names)}):\n"
        '    """Every operation as a coroutine method (``AsyncClient``)."""\n'
    )
    modules["__init__.py"] = _formatted(modules["__init__.py"])
    return modules


def _formatted(source: str) -> str:
    """Return ``source`` with its imports sorted and formatted as ``ruff`` writes all code."""
    for command in (["check", "--select", "I", "--fix", "--quiet"], ["format"]):
        source = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--stdin-filename", "generated.py", "-"],
            input=source,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
    out = source
    if all(len(line) <= LINE_LENGTH for line in out.splitlines()):  # ruff flags a needless noqa
        out = out.replace("# ruff: noqa: E501, F401", "# ruff: noqa: F401")
    return out


def targets() -> dict[Path, str]:
    """Every generated file and what it should hold."""
    return {
        **{ROOT / "src/engramdb/sdk/methods" / name: text for name, text in sdk_methods().items()},
        ROOT / "docs/api.md": api_reference(),
        ROOT / "docs/cli.md": cli_reference(),
        ROOT / "docs/configuration.md": configuration_reference(),
        ROOT / "docs/rest.md": _with_table("docs/rest.md", "rest", rest_table()),
        ROOT / "docs/mcp.md": _with_table("docs/mcp.md", "mcp", mcp_table()),
    }


def _with_table(page: str, marker: str, table: str) -> str:
    try:
        return with_table((ROOT / page).read_text(encoding="utf-8"), marker, table)
    except ValueError as error:
        raise SystemExit(f"{page}: {error}") from None


def stale() -> list[Path]:
    """The generated files whose content differs from what the registry makes."""
    return [p for p, text in targets().items() if not p.exists() or p.read_text(encoding="utf-8") != text]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        late = stale()
        for path in late:
            print(f"stale: {path.relative_to(ROOT)} (run python -m engramdb.devtools.generate)", file=sys.stderr)
        return 1 if late else 0
    for path, text in targets().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
