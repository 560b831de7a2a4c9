"""A request's body model is checked by its endpoint, in the endpoint's worker thread, and not by
FastAPI on the event loop, where one large body held every other request for seconds (api/routes.py):
the route that serves each operation with a body takes any JSON; the one that documents it (never
reached) declares the model, so the OpenAPI document is as before."""

from __future__ import annotations

from typing import Any

from fastapi.routing import APIRoute
from starlette.routing import Match

from engramdb.api.routes import operation_routes
from engramdb.models.operations import OPERATIONS


def _routes_for(path: str, method: str) -> list[APIRoute]:
    scope = {"type": "http", "path": path, "method": method}
    return [r for r in operation_routes() if isinstance(r, APIRoute) and r.matches(scope)[0] == Match.FULL]


def _sample_path(template: str) -> str:
    return template.replace("{", "x").replace("}", "")


def test_each_body_is_served_as_any_json_and_documented_as_its_model() -> None:
    with_body = [op for op in OPERATIONS if op.body is not None]
    assert with_body  # the control: there are such operations
    for op in with_body:
        served, *others = _routes_for(_sample_path(op.path), op.method)
        assert served.body_field is not None and served.body_field.field_info.annotation is Any, op.name
        assert not served.include_in_schema
        documented = [r for r in others if r.include_in_schema and r.path == op.path]
        assert documented and documented[0].body_field is not None, op.name
        assert documented[0].body_field.field_info.annotation is op.body, op.name


def test_an_operation_without_a_body_is_routed_once() -> None:
    without = [op for op in OPERATIONS if op.body is None and not op.path_params]
    assert without
    for op in without:
        assert len([r for r in _routes_for(op.path, op.method) if r.path == op.path]) == 1, op.name
