"""An operation's inputs: path values, a query model and a body model, built from plain values.

Every surface that is not HTTP itself (the SDK, the CLI, MCP) collects wire-named values
(``subjectKey``, ``factId``) and turns them into an ``Inputs`` here, so each validates the same way
and reports the same field names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from engramdb.errors import InvalidInputError
from engramdb.models.base import SCOPE_NAMES
from engramdb.models.operation import Operation
from engramdb.models.problems import validation_problem

ScopeSlot = Literal["query", "body", "body.scope", "body.grant"]


@dataclass(frozen=True)
class Inputs:
    """What a service method is called with, besides the caller."""

    path: tuple[str, ...]
    query: BaseModel | None
    body: BaseModel | None

    def args(self) -> tuple[Any, ...]:
        """The positional arguments after the caller: path values, then body, then query."""
        return (*self.path, *(m for m in (self.body, self.query) if m is not None))


def path_names(op: Operation[Any]) -> tuple[str, ...]:
    """The path parameters of an operation, in the order the path names them."""
    return tuple(op.path_params)


def wire_fields(model: type[BaseModel] | None) -> dict[str, Any]:
    """A model's fields by wire name (camelCase)."""
    if model is None:
        return {}
    return {(f.alias or to_camel(name)): f for name, f in model.model_fields.items()}


def scope_slot(op: Operation[Any]) -> ScopeSlot | None:
    """Where an operation takes the five scope fields, if anywhere."""
    if "agentId" in wire_fields(op.query):
        return "query"
    body = wire_fields(op.body)
    if "agentId" in body:
        return "body"
    if "scope" in body:
        return "body.scope"
    if "grant" in body:
        return "body.grant"
    return None


def build_inputs(
    op: Operation[Any],
    values: Mapping[str, Any],
    *,
    body: Mapping[str, Any] | BaseModel | None = None,
    scope: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Inputs:
    """Validate wire-named ``values`` (path, query and body fields mixed) into ``op``'s inputs.

    ``body`` is a whole body to start from (its fields lose to ``values``); ``scope`` holds scope
    fields for where the body names none, ``overrides`` scope fields that win over the body's;
    both are placed where the operation takes them. Raises InvalidInputError naming the field.
    """
    unknown = set(values) - set(op.path_params) - set(wire_fields(op.query)) - set(wire_fields(op.body))
    if unknown:
        raise InvalidInputError(f"{op.name} takes no {sorted(unknown)[0]}", field=sorted(unknown)[0])
    missing = [p for p in op.path_params if not values.get(p)]
    if missing:
        raise InvalidInputError(f"{missing[0]} is required", field=missing[0])
    query = {k: v for k, v in values.items() if k in wire_fields(op.query)}
    start = body.model_dump(by_alias=True, exclude_none=True) if isinstance(body, BaseModel) else dict(body or {})
    given = {**start, **{k: v for k, v in values.items() if k in wire_fields(op.body)}}
    _place_scope(op, dict(scope or {}), query, given)
    _place_scope(op, dict(overrides or {}), query, given, override=True)
    return Inputs(
        path=tuple(str(values[p]) for p in op.path_params),
        query=validate(op.query, query) if op.query else None,
        body=validate(op.body, given) if op.body else None,
    )


def _place_scope(
    op: Operation[Any], scope: dict[str, Any], query: dict[str, Any], body: dict[str, Any], override: bool = False
) -> None:
    named = {k: v for k, v in scope.items() if k in SCOPE_NAMES and v is not None}
    if not named:
        return
    slot = scope_slot(op)
    if slot in ("query", "body"):
        target = query if slot == "query" else body
        target.update({k: v for k, v in named.items() if override or k not in target})
    elif slot is not None:
        key = slot.split(".")[1]
        given = dict(body.get(key) or {})
        body[key] = {**given, **named} if override else {**named, **given}


def validate(model: type[BaseModel], data: Mapping[str, Any]) -> BaseModel:
    """Return ``data`` as ``model``, or raise InvalidInputError naming the first field at fault."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as error:
        problem = validation_problem(list(error.errors()))
        raise InvalidInputError(problem["message"], field=problem["field"], errors=problem["errors"]) from None
