"""A request's body is parsed and checked by its endpoint, in the endpoint's worker thread, and not by
FastAPI on the event loop, where one large body held every other request for seconds (api/routes.py,
api/body.py): the route that serves each operation with a body takes its bytes; the one that documents
it (never reached) declares the model, so the OpenAPI document is as before. What the endpoint makes
of the bytes is what FastAPI makes of them: its own parsing, on the same bodies, is the oracle."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Body, Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.exceptions import HTTPException
from starlette.routing import Match, Route

from engramdb.api.body import MAX_JSON_VALUES, parsed_body, raw_body
from engramdb.api.routes import LaneRoute, operation_routes
from engramdb.models.operations import OPERATIONS
from tests.conftest import LiveServer


def _routes_for(path: str, method: str) -> list[Route]:
    scope = {"type": "http", "path": path, "method": method}
    return [r for r in operation_routes() if isinstance(r, Route) and r.matches(scope)[0] == Match.FULL]


def _sample_path(template: str) -> str:
    return template.replace("{", "x").replace("}", "")


def test_each_body_is_served_as_its_bytes_and_documented_as_its_model() -> None:
    with_body = [op for op in OPERATIONS if op.body is not None]
    assert with_body  # the control: there are such operations
    for op in with_body:
        served, *others = _routes_for(_sample_path(op.path), op.method)
        if op.in_recall_lane:  # a plain route that reads the bytes itself (api/routes.py: LaneRoute)
            assert isinstance(served, LaneRoute) and served.op is op, op.name
        else:
            assert isinstance(served, APIRoute) and served.body_field is None, op.name  # nothing parsed on the loop
            assert raw_body in [d.call for d in served.dependant.dependencies], op.name
        assert not served.include_in_schema
        documented = [r for r in others if isinstance(r, APIRoute) and r.include_in_schema and r.path == op.path]
        assert documented and documented[0].body_field is not None, op.name
        assert documented[0].body_field.field_info.annotation is op.body, op.name


def test_an_operation_without_a_body_is_routed_once() -> None:
    without = [op for op in OPERATIONS if op.body is None and not op.path_params]
    assert without
    for op in without:
        assert len([r for r in _routes_for(op.path, op.method) if r.path == op.path]) == 1, op.name


def _outcome(app: FastAPI, content: bytes, content_type: str | None) -> tuple[int, Any]:
    headers = {} if content_type is None else {"content-type": content_type}
    with TestClient(app) as client:
        answer = client.post("/", content=content, headers=headers)
    return answer.status_code, answer.json()


BODIES: list[tuple[bytes, str | None]] = [
    (b'{"query": "tea"}', "application/json"),
    (b'{"query": "tea"}', "application/vnd.api+json; charset=utf-8"),
    (b'{"query": "tea"}', None),
    (b'{"query": "tea"}', "text/plain"),
    (b"[1, 2, 3]", "application/json"),
    (b"", "application/json"),
    (b"{", "application/json"),
    (b'{"a": 1,}', "application/json"),
    ('{"query": "caf\xe9"}'.encode("latin-1"), "application/json"),
    (b"[" * 100_000 + b"]" * 100_000, "application/json"),
    (b'{"limit": ' + b"1" * 5_000 + b"}", "application/json"),
    ('{"query": "café"}'.encode("utf-16"), "application/json"),
]


def test_the_endpoint_reads_a_body_as_fastapi_does() -> None:
    fastapi_own, ours = FastAPI(), FastAPI()

    @fastapi_own.post("/")
    def parsed_by_fastapi(body: Annotated[Any, Body()]) -> Any:
        return _shown(body)

    @ours.post("/")
    def parsed_by_us(request: Request, raw: Annotated[bytes, Depends(raw_body)]) -> Any:
        return _shown(parsed_body(raw, request))

    for app in (fastapi_own, ours):
        app.add_exception_handler(RequestValidationError, _validation)
        app.add_exception_handler(HTTPException, _http)
    outcomes = [(_outcome(fastapi_own, c, t), _outcome(ours, c, t)) for c, t in BODIES]
    assert len({str(theirs) for theirs, _ in outcomes}) >= 6  # the control: the bodies meet different ends
    for (content, content_type), (theirs, mine) in zip(BODIES, outcomes, strict=True):
        assert mine == theirs, (content[:40], content_type)


def _shown(body: Any) -> Any:
    return {"bytes": body.decode("latin-1")} if isinstance(body, bytes) else {"json": body}


async def _validation(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    return JSONResponse({"errors": jsonable_encoder(error.errors())}, status_code=422)


async def _http(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HTTPException)
    cause = type(error.__cause__).__name__
    return JSONResponse({"detail": error.detail, "cause": cause}, status_code=error.status_code)


def test_a_body_of_more_values_than_the_limit_is_refused_before_it_is_parsed(server: LiveServer) -> None:
    """16 MB of small values held every other request for 0.5-0.9 s while it parsed (the lock is held)."""
    headers = {"content-type": "application/json"}
    over = b"[" + b"0," * MAX_JSON_VALUES + b"0]"
    under = b"[" + b"0," * (MAX_JSON_VALUES - 10) + b"0]"
    with server.client(server.key()) as http:
        refused = http.post("/v1/episodes", content=over, headers=headers)
        assert refused.status_code == 413, refused.text
        assert refused.json()["field"] == "body" and refused.json()["limitValues"] == MAX_JSON_VALUES
        parsed = http.post("/v1/episodes", content=under, headers=headers)  # the control: parsed, then checked
        assert parsed.status_code == 422 and "valid dictionary" in parsed.json()["message"], parsed.text
