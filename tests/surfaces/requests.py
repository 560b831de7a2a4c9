"""A request for every declared operation, built from its declaration (for tests that walk them all)."""

from __future__ import annotations

from typing import Any

import httpx
from jsonschema import Draft202012Validator

from engramdb.models.operation import Operation
from engramdb.models.operations import BY_NAME


def example_request(op: Operation[Any], path_value: str = "0" * 64, **query: Any) -> dict[str, Any]:
    """``httpx`` request arguments for ``op``: every path value ``path_value``, the example body."""
    url = op.path
    for name in op.path_params:
        url = url.replace("{" + name + "}", path_value)
    request: dict[str, Any] = {"method": op.method, "url": url, "params": query or None}
    if op.body is not None:
        request["json"] = dict(op.example or {})
    return request


def operation(document: dict[str, Any], name: str) -> dict[str, Any]:
    """The OpenAPI operation object of a declared operation."""
    op = BY_NAME[name]
    return dict(document["paths"][op.path][op.method.lower()])


class Checker:
    """Validates real answers against what the document says the route answers."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.checked: set[tuple[str, int]] = set()

    def __call__(self, name: str, answer: httpx.Response) -> httpx.Response:
        responses = operation(self.document, name)["responses"]
        assert str(answer.status_code) in responses, (name, answer.status_code, answer.text)
        content = responses[str(answer.status_code)].get("content")
        if answer.status_code == 204:
            assert content is None and answer.content == b""
        else:
            schema = {**content["application/json"]["schema"], "components": self.document["components"]}
            errors = [e.message for e in Draft202012Validator(schema).iter_errors(answer.json())]
            assert errors == [], (name, answer.status_code, errors)
        self.checked.add((name, answer.status_code))
        return answer
