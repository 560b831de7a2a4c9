"""Problem JSON for validation failures, shared by REST and the batch endpoint."""

from __future__ import annotations

from typing import Any


def _field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


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
