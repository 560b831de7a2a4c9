"""Problem JSON for validation failures, shared by REST and the batch endpoint."""

from __future__ import annotations

from typing import Any


def _field(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "body"


def validation_problem(errors: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the 422 body for pydantic errors: the first field, and every error listed."""
    details = [{"field": _field(tuple(e.get("loc", ()))), "message": e.get("msg", "")} for e in errors]
    first = details[0] if details else {"field": "body", "message": "invalid input"}
    return {
        "code": "invalid_input",
        "message": f"{first['field']}: {first['message']}",
        "field": first["field"],
        "errors": details,
    }


def request_problem(errors: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the 422 body for FastAPI's request errors.

    Their locations start with where the value came from (``body``, ``query``, ``path``,
    ``header``); only that first part is dropped, so a body field named ``query`` keeps its name.
    """
    return validation_problem([_located_in_request(e) for e in errors])


def _located_in_request(error: dict[str, Any]) -> dict[str, Any]:
    if error.get("type") == "json_invalid":
        # FastAPI puts the character offset where a field would be: the body as a whole is bad.
        offset = tuple(error.get("loc", ()))[-1]
        why = (error.get("ctx") or {}).get("error", "JSON decode error")
        return {"loc": (), "msg": f"malformed JSON at character {offset}: {why}"}
    return {**error, "loc": tuple(error.get("loc", ()))[1:]}
