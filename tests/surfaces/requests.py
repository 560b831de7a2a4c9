"""A request for every declared operation, built from its declaration (for tests that walk them all)."""

from __future__ import annotations

from typing import Any

from engramdb.models.operation import Operation


def example_request(op: Operation[Any], path_value: str = "0" * 64, **query: Any) -> dict[str, Any]:
    """``httpx`` request arguments for ``op``: every path value ``path_value``, the example body."""
    url = op.path
    for name in op.path_params:
        url = url.replace("{" + name + "}", path_value)
    request: dict[str, Any] = {"method": op.method, "url": url, "params": query or None}
    if op.body is not None:
        request["json"] = dict(op.example or {})
    return request
