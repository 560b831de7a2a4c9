"""Python signatures of the SDK's methods, read off the operations' models."""

from __future__ import annotations

import json
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from engramdb.models.base import SCOPE_NAMES
from engramdb.models.inputs import wire_fields
from engramdb.models.operation import Operation


def snake(name: str) -> str:
    """``factId`` -> ``fact_id``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def type_text(tp: Any, models: set[str]) -> str:
    """A type as Python source; model classes met on the way are added to ``models``."""
    origin, args = get_origin(tp), get_args(tp)
    if tp is type(None):
        return "None"
    if origin is Annotated:
        return type_text(args[0], models)
    if origin in (Union, types.UnionType):
        return " | ".join(type_text(a, models) for a in args)
    if origin is Literal:
        return "Literal[" + ", ".join(json.dumps(a) for a in args) + "]"
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(type_text(a, models) for a in args)}]"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        models.add(tp.__name__)
        return tp.__name__
    if tp in (str, int, float, bool):
        return str(tp.__name__)
    return "Any"


@dataclass(frozen=True)
class Signature:
    """One SDK method: its parameters as source, and how they become the operation's inputs."""

    params: list[str]
    path: list[str]
    body: str | None
    query: list[tuple[str, str]]  # (python name, python name) pairs passed on as keywords
    returns: str


def signature_of(op: Operation[Any], models: set[str]) -> Signature:
    path = [snake(p) for p in op.path_params]
    params = [f"{p}: str" for p in path]
    body = None
    if op.body is not None:
        models.add(op.body.__name__)
        body_type = f"{op.body.__name__} | Mapping[str, Any]"
        if op.shorthand:
            shorthand = wire_fields(op.body)[op.shorthand].annotation
            body_type += f" | {type_text(shorthand, models)}"
            item = get_args(shorthand)[0] if get_origin(shorthand) is list else None
            if isinstance(item, type) and issubclass(item, BaseModel):  # its items as JSON too (Mem0's messages)
                body_type += " | list[dict[str, Any]]"
        params.append(f"{op.body_arg}: {body_type}{' | None = None' if op.body_optional else ''}")
        body = op.body_arg
    query = _query_params(op.query, models)
    if query:
        params.append("*")
        params += [text for _, text in query]
    returns = "None" if op.output is None else op.output.__name__
    if op.output is not None:
        models.add(op.output.__name__)
    return Signature(params, path, body, [(n, n) for n, _ in query], returns)


def _query_params(model: type[BaseModel] | None, models: set[str]) -> list[tuple[str, str]]:
    if model is None:
        return []
    fields: Mapping[str, FieldInfo] = wire_fields(model)
    required: list[tuple[str, str]] = []  # keyword-only, so they may come first
    out: list[tuple[str, str]] = []
    if any(name in SCOPE_NAMES for name in fields):
        models.add("ScopeFields")
        out.append(("scope", "scope: ScopeFields | Mapping[str, Any] | None = None"))
    for wire, info in fields.items():
        if wire in SCOPE_NAMES:
            continue
        name = snake(wire)
        annotation = type_text(info.annotation, models)
        if info.is_required():
            required.append((name, f"{name}: {annotation}"))
            continue
        if info.default is None and "None" not in annotation:
            annotation += " | None"
        out.append((name, f"{name}: {annotation} = {info.default!r}"))
    return required + out
