"""docs/configuration.md, written from ``engramdb.config.Settings``: every field, its variable and default."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from engramdb.config import Settings

PREFIX = Settings.model_config.get("env_prefix", "")
NESTING = Settings.model_config.get("env_nested_delimiter") or "__"
INTRO = f"""# Configuration

Generated from `engramdb.config.Settings` by `python -m engramdb.devtools.generate`; a test fails
when it is stale. Every setting is read once, when a command starts: an explicit argument (such
as `engram serve --port`) wins over the environment, which wins over the default. A variable is
`{PREFIX}` and the setting's name in capitals; a setting of a section joins the section's name
with `{NESTING}` (`{PREFIX}RETRIEVAL{NESTING}RRF_K=60`). Values are validated at start: a
misspelt value (`{PREFIX}SQLITE_SYNCHRONOUS=FUL`) is refused, never run as the default.

Beside these, the CLI and the SDK's tools read `ENGRAM_URL` and `ENGRAM_KEY` (which server to ask,
with which key: [cli.md](cli.md)); the integrations read their own variables
([integrations.md](integrations.md)); the tenant's policy (trust, aging, retention) is not a
setting but data, changed with `PUT /v1/policy` ([concepts.md](concepts.md#trust-and-review)).
"""


def configuration_reference() -> str:
    """docs/configuration.md: a table per section of the settings."""
    top = {name: f for name, f in Settings.model_fields.items() if not _is_section(f)}
    sections = {name: f for name, f in Settings.model_fields.items() if _is_section(f)}
    lines = [INTRO, "## Server and storage", "", *_table(top, PREFIX)]
    for name, section in sections.items():
        model = section.annotation
        assert isinstance(model, type) and issubclass(model, BaseModel)
        doc = " ".join((model.__doc__ or "").split())
        prefix = f"{PREFIX}{name.upper()}{NESTING}"
        lines += ["", f"## `{name}`: {section.description}", "", doc, "", *_table(model.model_fields, prefix)]
    return "\n".join(lines) + "\n"


def _is_section(f: FieldInfo) -> bool:
    return isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel)


def _table(fields: dict[str, FieldInfo], prefix: str) -> list[str]:
    rows = ["| variable | type | default | what it does |", "|---|---|---|---|"]
    for name, f in fields.items():
        description = _cell(f.description or "")
        rows.append(f"| `{prefix}{name.upper()}` | {_type(f)} | {_default(f)} | {description} |")
    return rows


def _type(f: FieldInfo) -> str:
    bounds = {annotated_types.Ge: ("ge", "≥"), annotated_types.Gt: ("gt", ">"), annotated_types.Le: ("le", "≤")}
    limits = [
        f"{sign} {getattr(m, name)}" for m in f.metadata for kind, (name, sign) in bounds.items() if type(m) is kind
    ]
    return _cell(", ".join([_kind(f.annotation), *limits]))


def _kind(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return " or ".join(f"`{value}`" for value in get_args(annotation))
    if get_origin(annotation) in (Union, types.UnionType):
        return _kind(next(a for a in get_args(annotation) if a is not type(None)))
    names = {bool: "boolean", int: "integer", float: "number", str: "text", Path: "path", SecretStr: "secret"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _default(f: FieldInfo) -> str:
    value = f.default
    if value is PydanticUndefined or value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str | Path):
        return f'`"{value}"`' if value == "" else f"`{value}`"
    return f"`{value:,}`" if isinstance(value, int) and value >= 10_000 else f"`{value}`"


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell: no pipes or line ends of its own."""
    return " ".join(text.split()).replace("|", "\\|")
