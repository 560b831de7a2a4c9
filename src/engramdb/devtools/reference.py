"""The API reference and the REST and MCP tables of the docs, written from the operation registry."""

from __future__ import annotations

import inspect
import json
from typing import Any

from engramdb.api.openapi import responses
from engramdb.core.auth import PERMISSIONS
from engramdb.models.operation import OPTION_NAMES, Operation
from engramdb.models.operations import OPERATIONS

TAGS = {
    "service": "Service",
    "memories": "Memories",
    "scopes": "Scopes",
    "lifecycle": "Beliefs that change",
    "review": "Review",
    "recall": "Recall",
    "audit": "Audit",
    "policy": "Policy",
    "keys": "Keys",
    "knowledge": "Knowledge",
    "erasure": "Erasure",
    "aging": "Aging",
    "jobs": "Jobs",
    "usage": "Usage over time",
    "assist": "Model-assisted memory",
    "integrations": "Integrations",
    "changes": "Change feed",
    "webhooks": "Webhooks",
}


def _cli(op: Operation[Any]) -> str:
    if op.cli is None:
        return "-"
    words = [*op.cli.command, *(f"{p.upper()}" for p in op.path_params), *(f"{p.upper()}" for p in op.cli.positional)]
    return f"`engram {' '.join(words)}`"


def _roles(op: Operation[Any]) -> str:
    if op.permission is None:
        return "anyone (no key)"
    return ", ".join(sorted(PERMISSIONS[op.permission].roles))


def rest_table() -> str:
    """docs/rest.md's table: one row per route."""
    rows = ["| method and path | what it does |", "|---|---|"]
    rows += [f"| `{op.method} {op.path}` | {op.summary} |" for op in OPERATIONS]
    return "\n".join(rows)


def mcp_table() -> str:
    """docs/mcp.md's table: one row per tool, from the operations that declare one."""
    rows = ["| tool | arguments | operation | what it does |", "|---|---|---|---|"]
    for op in OPERATIONS:
        if op.mcp is None:
            continue
        args = (
            ", ".join(
                f"`{name}`"
                + (
                    ""
                    if arg.default in (..., inspect.Parameter.empty)  # empty: required
                    else f" (default `{json.dumps(arg.default)}`)"  # as the tool's schema says it
                )
                for name, arg in op.mcp.args
            )
            or "none"
        )
        first = op.mcp.description.split(". ")[0].rstrip(".") + "."
        if op.mcp.needs_model:
            first += " Listed only when a chat model is configured."
        rows.append(f"| `{op.mcp.tool}` | {args} | `{op.method} {op.path}` | {first} |")
    return "\n".join(rows)


def with_table(text: str, marker: str, table: str) -> str:
    """``text`` with the generated table between its ``<!-- ops:MARKER:start/end -->`` lines replaced.

    Raises ValueError when the lines are missing: a page that lost them would otherwise pass as fresh.
    """
    start, end = f"<!-- ops:{marker}:start -->", f"<!-- ops:{marker}:end -->"
    if text.count(start) != 1 or text.count(end) != 1:
        raise ValueError(f"the page needs exactly one {start} and one {end} line")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{table}\n{end}{tail}"


def api_reference() -> str:
    """docs/api.md: every operation on every surface."""
    lines = [
        "# API reference",
        "",
        "Generated from `src/engramdb/models/operations/` by `python -m engramdb.devtools.generate`; "
        "a test fails when it is stale. Every operation is the same on every surface: the REST route, "
        "the SDK method (`Client` and `AsyncClient`), the `engram` command (on the data folder, or "
        "against a server with `--url` and `--key`) and, for some, an MCP tool.",
        "",
        "| operation | REST | SDK | CLI | MCP tool |",
        "|---|---|---|---|---|",
    ]
    untitled = sorted({op.tag for op in OPERATIONS} - set(TAGS))
    if untitled:  # its operations would have a row and no section
        raise SystemExit(f"tags without a title in TAGS: {', '.join(untitled)}")
    for op in OPERATIONS:
        tool = f"`{op.mcp.tool}`" if op.mcp else "-"
        lines.append(f"| {op.name} | `{op.method} {op.path}` | `{op.name}()` | {_cli(op)} | {tool} |")
    for tag, title in TAGS.items():
        lines += ["", f"## {title}"]
        for op in (o for o in OPERATIONS if o.tag == tag):
            lines += ["", *_section(op)]
    lines += [
        "",
        "CLI options are the wire fields in kebab case, except: "
        + ", ".join(f"`{k}` is `{v}`" for k, v in OPTION_NAMES.items())
        + "; booleans are flags; "
        "`--body` takes a whole JSON body (`@file` or `-` for stdin); `--json` prints the answer as JSON.",
    ]
    return "\n".join(lines) + "\n"


def _section(op: Operation[Any]) -> list[str]:
    statuses = ", ".join(str(s) for s in sorted(k for k in responses(op) if isinstance(k, int) and k >= 400))
    success = "201 (created) or 200 (already stored)" if op.created_status else str(op.status if op.output else 204)
    out = [
        f"### `{op.name}`: `{op.method} {op.path}`",
        "",
        op.description or op.summary,
        "",
        f"- who: {_roles(op)}",
        f"- answers: {success}; problems: {statuses}",
        f"- SDK: `client.{op.name}(...)`; CLI: {_cli(op)}",
    ]
    if op.mcp:
        out.append(f"- MCP tool `{op.mcp.tool}({', '.join(name for name, _ in op.mcp.args)})`")
    return out
