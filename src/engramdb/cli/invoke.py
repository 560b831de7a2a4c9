"""Running one ``engram`` command: its options as the operation's inputs, where it runs, what it prints.

Options override ``--body``; on the data folder an unnamed scope is this machine's user's. An id
may be a unique prefix of one the operation's listing shows. Errors name the option to fix.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import typer
from pydantic import BaseModel

from engramdb.cli.context import DEFAULT_TENANT, Local, Remote, Target, local_scope
from engramdb.cli.render import show
from engramdb.errors import ConflictError, EngramError, InvalidInputError, NotFoundError
from engramdb.models.inputs import build_inputs, scope_slot
from engramdb.models.operation import Operation
from engramdb.models.operations import BY_NAME

Kind = Literal["path", "field", "scope", "meta", "raw"]
_WHOLE_ID = re.compile(r"[0-9a-f]{32,64}")


@dataclass(frozen=True)
class Param:
    """One parameter of a built command: what it is called and what it fills."""

    name: str  # the Python parameter name
    wire: str | None  # the input (or meta setting) it fills
    kind: Kind
    annotation: Any
    default: Any = None
    parse: Callable[[Any], Any] | None = None

    @property
    def flag(self) -> str:
        """How the command line names it: its option, or its argument's metavar."""
        info = self.annotation.__metadata__[0]
        # Inside Annotated, typer keeps an option's first name where a default would go.
        first = getattr(info, "default", None)
        decls = [first] if isinstance(first, str) and first.startswith("-") else list(info.param_decls or ())
        return str(decls[0]).split("/")[0] if decls else getattr(info, "metavar", None) or self.name


def run(op: Operation[Any], params: list[Param], given: Mapping[str, Any]) -> None:
    """Run ``op`` with the command's parameters and print its answer."""
    assert op.cli is not None
    values, scope, meta, raw = _collect(params, given)
    body = _read_body(meta.get("body"))
    for name, default in op.cli.defaults.items():
        if name not in values and name not in body:
            values[name] = default() if callable(default) else default
    target = _target(meta)
    try:
        defaults = local_scope() if not target.remote and op.cli.local_scope else {}
        if op.cli.id_prefix_of:
            values.update({p: _full_id(target, op, values[p], {**defaults, **scope}) for p in op.path_params})
        if op.cli.merge_from:  # options change what is there rather than replace it
            body = {**_current(target, op.cli.merge_from), **body}
        answer = target.call(op, build_inputs(op, values, body=body, scope=defaults, overrides=scope))
    except InvalidInputError as error:
        raise _named(error, params, scope, grants=scope_slot(op) == "body.grant") from None
    finally:
        target.close()
    if raw:
        print(getattr(answer, raw[0]))
        return
    done = op.cli.done.format(**{p: values[p] for p in op.path_params}, answer=answer) if op.cli.done else None
    show(answer, as_json=bool(meta.get("json")), done=done)
    if op.cli.fails_unless and not getattr(answer, op.cli.fails_unless):
        raise typer.Exit(1)  # the answer says something does not hold: a script must notice


def _collect(
    params: list[Param], given: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], list[str]]:
    values: dict[str, Any] = {}
    scope: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    raw: list[str] = []
    for p in params:
        value = given[p.name]
        # A plain flag left off says nothing; a --x/--no-x option says false when given as --no-x.
        if value is None or value == [] or (value is False and p.default is False):
            continue
        value = p.parse(value) if p.parse else value
        if p.kind in ("path", "field"):
            values[p.wire or ""] = value
        elif p.kind == "scope":
            scope[p.wire or ""] = value
        elif p.kind == "raw":
            raw.append(p.wire or "")
        else:
            meta[p.wire or ""] = value
    return values, scope, meta, raw


def _target(meta: Mapping[str, Any]) -> Target:
    if meta.get("url"):
        for local_only in ("tenant", "home", "create_tenant"):
            if meta.get(local_only):
                raise InvalidInputError(
                    f"--{local_only.replace('_', '-')} works on the data folder; with --url "
                    "the server and the key decide",
                    field=f"--{local_only}",
                )
        return Remote(str(meta["url"]), meta.get("key"))
    return Local(meta.get("home"), meta.get("tenant") or DEFAULT_TENANT, bool(meta.get("create_tenant")))


def _full_id(target: Target, op: Operation[Any], given: str, scope: Mapping[str, Any]) -> str:
    """The one id the operation's listing shows that starts with ``given`` (a whole id as it is)."""
    assert op.cli is not None and op.cli.id_prefix_of is not None
    if _WHOLE_ID.fullmatch(given):
        return given
    listing = BY_NAME[op.cli.id_prefix_of]
    try:
        answer = target.call(listing, build_inputs(listing, dict(op.cli.id_prefix_query), scope=scope))
    except EngramError:  # no listing for this caller: the id stands as given, and the call says why
        return given
    listed = answer.model_dump(by_alias=True, mode="json") if isinstance(answer, BaseModel) else {}
    matches = sorted({i for i in _ids(listed, op.cli.id_key) if i.startswith(given)})
    if len(matches) == 1:
        return matches[0]
    error = NotFoundError if not matches else ConflictError
    command = " ".join(listing.cli.command) if listing.cli else listing.name
    raise error(f"{len(matches)} ids listed by `engram {command}` start with {given!r}", field="id")


def _ids(data: Any, key: str) -> list[str]:
    if isinstance(data, dict):
        own = [v for k, v in data.items() if k == key and isinstance(v, str)]
        return own + [i for v in data.values() for i in _ids(v, key)]
    if isinstance(data, list):
        return [i for v in data for i in _ids(v, key)]
    return []


def _current(target: Target, name: str) -> dict[str, Any]:
    answer = target.call(BY_NAME[name], build_inputs(BY_NAME[name], {}))
    return answer.model_dump(by_alias=True, mode="json") if isinstance(answer, BaseModel) else {}


def _read_body(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        if text == "-":
            text = sys.stdin.read()
        elif text.startswith("@"):
            with open(text[1:], encoding="utf-8") as source:
                text = source.read()
    except OSError as error:
        raise InvalidInputError(f"--body: cannot read {text[1:]}: {error.strerror}", field="--body") from None
    try:
        value = json.loads(text)
    except ValueError as error:
        raise InvalidInputError(f"--body is not JSON: {error}", field="--body") from None
    if not isinstance(value, dict):
        raise InvalidInputError("--body must be a JSON object", field="--body")
    return value


def _named(
    error: InvalidInputError, params: list[Param], named_scope: Mapping[str, Any], *, grants: bool
) -> InvalidInputError:
    """The same error, saying which option (or argument) of this command to fix.

    A scope field the command did not name is one the key leaves open: the server names the first
    (in the options' order), so the options after it that were not named are said too, at once.
    Not when the scope options are a new key's grant (``keys create``): each role needs its own.
    """
    field = (error.field or "").split(".")[-1]
    flags = {p.wire: p.flag for p in params if p.wire}
    if field not in flags:
        return error
    hint = flags[field]
    scope = [p.wire for p in params if p.kind == "scope" and p.wire]
    if field in scope and field not in named_scope and not grants:
        later = [flags[w] for w in scope[scope.index(field) + 1 :] if w not in named_scope]
        hint = f"pass {hint}" + (f", and {' and '.join(later)} unless the key fixes them" if later else "")
    return InvalidInputError(f"{error.message} ({hint})", field=error.field, **error.context)
