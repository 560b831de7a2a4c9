"""Problem JSON: the one shape every error takes on every surface, and how validation errors
become it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import ConfigDict, Field

from engramdb.models.base import ResponseModel

ProblemCode = Literal[
    "invalid_input",
    "bad_request",
    "unauthenticated",
    "forbidden",
    "not_found",
    "method_not_allowed",
    "conflict",
    "embedding_failed",
    "backend_unavailable",
    "internal",
    # model-assisted memory (docs/assist.md)
    "model_not_configured",
    "model_failed",
    "model_output_invalid",
    "model_timeout",
]


class FieldProblem(ResponseModel):
    """One field a request got wrong."""

    field: str = Field(description="the field, dotted for nested ones (scope.agentId); body for the whole body")
    message: str = Field(description="what is wrong with it")


class Problem(ResponseModel):
    """An error: a stable code, a message for people, the field at fault; more context by kind."""

    model_config = ConfigDict(extra="allow")

    code: ProblemCode = Field(description="stable and machine-readable: what kind of problem it is")
    message: str = Field(description="what went wrong, for people")
    field: str | None = Field(None, description="the request field at fault, when one is")
    retryable: bool | None = Field(
        None, description="5xx: whether the same request may succeed later (a busy store: yes)"
    )
    errors: list[FieldProblem] | None = Field(None, description="422: every field error, the first one first")
    request_id: str | None = Field(None, description="500: the id under which the server logged the failure")


_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "dict", "list", "none", "null"})


def _field(loc: tuple[Any, ...]) -> str:
    # A union's errors carry the member tried as a step (data.dict[str,any]): not a field.
    steps = [str(p) for p in loc if not (isinstance(p, str) and (p in _TYPE_TAGS or "[" in p))]
    return ".".join(steps) or "body"


def validation_problem(errors: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Return the 422 body for pydantic errors: the first field, and every error listed."""
    details = [{"field": _field(tuple(e.get("loc", ()))), "message": e.get("msg", "")} for e in errors]
    first = details[0] if details else {"field": "body", "message": "invalid input"}
    return {
        "code": "invalid_input",
        "message": f"{first['field']}: {first['message']}",
        "field": first["field"],
        "errors": details,
    }


def request_problem(errors: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Return the 422 body for FastAPI's request errors.

    Their locations start with where the value came from (``body``, ``query``, ``path``,
    ``header``); only that first part is dropped, so a body field named ``query`` keeps its name.
    """
    return validation_problem([_located_in_request(e) for e in errors])


def _located_in_request(error: Mapping[str, Any]) -> dict[str, Any]:
    if error.get("type") == "json_invalid":
        # FastAPI puts the character offset where a field would be: the body as a whole is bad.
        offset = tuple(error.get("loc", ()))[-1]
        why = (error.get("ctx") or {}).get("error", "JSON decode error")
        return {"loc": (), "msg": f"malformed JSON at character {offset}: {why}"}
    return {**error, "loc": tuple(error.get("loc", ()))[1:]}
