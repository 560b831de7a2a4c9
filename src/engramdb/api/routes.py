"""REST routes built from the operation registry: one generic endpoint per declared operation.

FastAPI reads an endpoint's signature to know what to parse and what to document, so each
operation gets a signature made from its declaration (path parameters, query model, body model)
and one body: authenticate, call the service, answer with the operation's status.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable
from functools import cache, partial, wraps
from typing import Annotated, Any, TypeVar

import anyio
import anyio.to_thread
from fastapi import APIRouter, Body, Depends, Path, Query, Request, Response
from fastapi.openapi.models import Example
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool
from starlette.routing import BaseRoute, Match, Route
from starlette.types import Scope

from engramdb import metrics
from engramdb.api.body import checked_body, raw_body
from engramdb.api.guard import CALLER_KEY
from engramdb.api.lane import FairLane, Line, line_of, run_on_place
from engramdb.api.openapi import responses
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.operations import run
from engramdb.errors import InvalidInputError
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation
from engramdb.models.operations import OPERATIONS

_bearer = HTTPBearer(
    auto_error=False,  # a missing key is our AuthenticationError (401 problem JSON), not FastAPI's 403
    scheme_name="EngramKey",
    description="An EngramDB key: `egm.<tenant>.<keyId>.<secret>` (engram keys create, or POST /v1/keys).",
)
JSON = "application/json"
T = TypeVar("T")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


async def authenticated(request: Request, credentials: Credentials) -> Caller:
    """The caller a request's bearer key belongs to (401 without a valid key); the guard in front
    of the routes has usually looked it up already.

    A coroutine, so the usual case costs no trip to a worker thread (FastAPI runs a plain function
    dependency in one); the key is looked up in one only when the guard has not.
    """
    return await _caller(request, credentials.credentials if credentials else None)


async def _caller(request: Request, token: str | None) -> Caller:
    """The caller the guard found for the request, else the one ``token`` belongs to (401 for none)."""
    known = request.scope.get(CALLER_KEY)
    if isinstance(known, Caller):
        return known
    return await run_in_threadpool(auth.authenticate, request.app.state.store, token)


@cache
def operation_routes() -> tuple[BaseRoute, ...]:
    """Every operation's route, built once per process and shared by every app made in it.

    FastAPI builds a route's parsing and answer models when the route is made (most of an app's
    start: a test suite makes hundreds of apps); an endpoint reads the service from its request's
    app, so one set of routes serves any number of apps. Paths with fewer parameters come first:
    /v1/records/schema before /v1/records/{record_id}.
    """
    router = APIRouter()
    for op in sorted(OPERATIONS, key=lambda op: op.path.count("{")):
        add_route(router, op)
    return tuple(router.routes)


def add_route(router: APIRouter, op: Operation[Any]) -> None:
    """Route ``op`` on ``router``, documented from its declaration.

    An operation with a body is routed twice at one path and method. The first route serves every
    request: it reads the body's bytes, and the endpoint parses them and checks them against the
    model in its worker thread (api/body.py). FastAPI parses and checks a declared body on the event
    loop, where one large body held every other request for seconds (a 15 MB one, 4.2 s). The second
    route, never reached (the first that matches serves), declares the model, for the OpenAPI document.
    A recall's first route is a plain one (``LaneRoute``).
    """
    if op.body is not None and LaneRoute.serves(op):
        router.routes.append(LaneRoute(op))
    elif op.body is not None:
        _add_unlisted(router, op, op.path, f"{op.name}_served")
    router.add_api_route(
        op.path,
        _endpoint(op),
        methods=[op.method],
        name=op.name,
        operation_id=op.name,
        summary=op.summary,
        description=op.description or op.summary,
        tags=[op.tag],
        response_model=op.output,
        status_code=op.status if op.output else 204,
        responses=responses(op),
        response_description=_success(op),
        response_class=Response if op.output is None else JSONResponse,
    )
    for path in op.former_paths:  # the same endpoint, left out of the OpenAPI: new clients use op.path
        _add_unlisted(router, op, path, f"{op.name}_formerly")


def _add_unlisted(router: APIRouter, op: Operation[Any], path: str, name: str) -> None:
    """A route of ``op`` left out of the OpenAPI document, its body checked by the endpoint."""
    router.add_api_route(
        path,
        _endpoint(op, checked_by_endpoint=op.body is not None),
        methods=[op.method],
        name=name,
        response_model=op.output,
        status_code=op.status if op.output else 204,
        response_class=Response if op.output is None else JSONResponse,
        include_in_schema=False,
    )


def _success(op: Operation[Any]) -> str:
    if op.output is None:
        return "Done; no content."
    if op.created_status:
        return "Created (the answer's outcome says what the write did); 200 when it was already stored."
    return f"The answer: {op.output.__doc__.splitlines()[0] if op.output.__doc__ else op.output.__name__}"


def _endpoint(op: Operation[Any], *, checked_by_endpoint: bool = False) -> Any:
    query_names = _query_names(op)  # once per route, not per request

    def endpoint(request: Request, response: Response, **parts: Any) -> Any:
        _refuse_nul(op, parts)
        _refuse_repeated(query_names, request)
        body = checked_body(op, parts["body"], request) if checked_by_endpoint else parts.get("body")
        inputs = Inputs(tuple(parts[p] for p in op.path_params), parts.get("query"), body)
        answer = run(request.app.state.service, op, parts.get("caller"), inputs)
        sent = _encoded(op, answer)
        if sent is not None:
            return sent
        response.status_code = op.answer_status(answer)
        return answer

    served: Callable[..., Any] = in_recall_lane(endpoint) if op.in_recall_lane else endpoint
    served.__name__ = op.name
    served.__doc__ = op.summary
    served.__signature__ = inspect.Signature(_parameters(op, parsed_body=checked_by_endpoint))  # type: ignore[attr-defined]
    return served


def in_recall_lane(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """``endpoint`` (a route's function, called with its parts by keyword, ``request`` among them) run
    in a worker thread of the app's recall lane (``app.state.recall_lane``).

    With a model in this process a recall is CPU work from end to end: on 2 cores, 32 recalls in 32
    threads each embed and rank at a sixteenth of the speed and all finish late; one per core finish
    in turn while the rest wait on the event loop, holding no thread. A recall whose client hangs up
    while it waits (a host's recall budget ran out) leaves the queue at once and is not run: nobody
    would read it (499, counted). Without a lane (None: a remote embedder, whose recalls mostly wait
    on the network) it runs in the shared pool, as any endpoint. REST's recall and the dashboard's
    recall playground are served this way.
    """

    @wraps(endpoint)
    async def in_lane(**parts: Any) -> Any:
        return await run_in_recall_lane(parts["request"], partial(endpoint, **parts))

    return in_lane


async def run_in_recall_lane(request: Request, call: Callable[[], T]) -> T | Response:
    """``call`` run in a worker thread of the app's recall lane once the request's turn comes, or
    499 if its client hung up while it waited (``in_recall_lane``)."""
    lane: FairLane | None = request.app.state.recall_lane
    if lane is None:
        return await anyio.to_thread.run_sync(call)
    at_once = lane.try_acquire()
    placed = at_once or await _turn_unless_gone(lane, line_of(request.scope.get(CALLER_KEY)), request)
    try:
        # One that waited is asked whether its client is still there. One placed at once is run
        # without asking: the look cost ~0.2 ms of every recall, and a client that left as its
        # body arrived costs one recall's work, as one that stays would.
        if not placed or (not at_once and await request.is_disconnected()):
            metrics.RECALLS_ABANDONED.inc()
            return Response(status_code=CLIENT_CLOSED)
        return await run_on_place(call)
    finally:
        if placed:
            lane.release()


class LaneRoute(Route):
    """The route that serves a recall-lane operation whose only input is its body (REST's recall):
    a plain route, doing what FastAPI's served route did, in its order.

    FastAPI builds a route's parts for every request (its dependencies solved, each checked); of a
    recall answered in ~11 ms that was 0.36 ms, on the path measured against a bare pipeline
    (bench/RESULTS.md, session 51). This one takes the caller the guard found (else checks the key
    itself, 401 without one), reads the body's bytes, and in its lane's worker thread checks the
    body (api/body.py), calls the service, and encodes the answer. FastAPI's route behind it stays
    for the OpenAPI document, never reached.
    """

    def __init__(self, op: Operation[Any]) -> None:
        if not self.serves(op):
            raise ValueError(f"{op.name} is not a recall-lane operation of a body alone")
        self.op = op
        super().__init__(op.path, self._serve, methods=[op.method], name=f"{op.name}_served", include_in_schema=False)

    @staticmethod
    def serves(op: Operation[Any]) -> bool:
        return op.in_recall_lane and op.body is not None and not op.path_params and op.query is None and not op.public

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        if match is Match.FULL:  # so the access log, the metrics and the server span need not search for its template
            child["route"] = self
        return match, child

    async def _serve(self, request: Request) -> Response:
        caller = await _caller(request, auth.bearer_token(request.headers.get("authorization", "")))
        raw = await request.body()
        return await run_in_recall_lane(request, partial(self._answer, request, caller, raw))

    def _answer(self, request: Request, caller: Caller, raw: bytes) -> Response:
        answer = run(request.app.state.service, self.op, caller, Inputs((), None, checked_body(self.op, raw, request)))
        sent = _encoded(self.op, answer)
        if sent is None:  # a service answers its operation's model (tests/surfaces: every operation)
            raise TypeError(f"{self.op.name} answered a {type(answer).__name__}, not its {self.op.output}")
        return sent


def _encoded(op: Operation[Any], answer: Any) -> Response | None:
    """The answer sent as it is, when the service built it as the operation's own model (or none):
    serialised once, in pydantic's core, instead of FastAPI validating it again (in another
    worker-thread hop) and encoding a dict with json.dumps. None for any other answer."""
    if answer is None:
        return Response(status_code=204)
    if type(answer) is op.output:
        return Response(answer.model_dump_json(by_alias=True), op.answer_status(answer), media_type=JSON)
    return None


async def _turn_unless_gone(lane: FairLane, line: Line, request: Request) -> bool:
    """Whether the request got a place in ``lane`` (in ``line``), False if the client hung up before
    its turn.

    The wait races the connection: the request's body has been read (the routes served this way
    declare one), so the next message from the server is the client's disconnect.
    """
    got = False

    async def wait_turn() -> None:
        nonlocal got
        await lane.acquire(line)
        got = True  # no await between the place and the flag: a cancel cannot fall between them
        group.cancel_scope.cancel()

    async def watch_connection() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass  # a GET's empty body, never read by the endpoint
        group.cancel_scope.cancel()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(wait_turn)
            group.start_soon(watch_connection)
    except BaseException:
        if got:  # its turn came as the request itself was cancelled: the place goes back
            lane.release()
        raise
    return got


CLIENT_CLOSED = 499  # nginx's status for a request whose client closed the connection first


def _query_names(op: Operation[Any]) -> dict[str, str]:
    """Every spelling of the operation's query parameters (snake_case and camelCase) -> its wire name."""
    fields = op.query.model_fields.items() if op.query is not None else ()
    return {spelling: info.alias or n for n, info in fields for spelling in (n, info.alias or n)}


def _refuse_repeated(names: dict[str, str], request: Request) -> None:
    """A query parameter given twice (``kinds=a&kinds=b``, or ``agentId`` beside ``agent_id``) was read
    as its last value, silently: a feed client asking for two kinds got one, and its cursor moved past
    the other's changes. No query parameter is a list (a list is comma-separated): 422 naming it.
    ``names``: the spellings of the route's parameters (``_query_names``)."""
    if not names or not request.query_params:
        return
    given = Counter(names[key] for key, _ in request.query_params.multi_items() if key in names)
    for name, count in given.items():
        if count > 1:
            raise InvalidInputError(
                f"{name} is given {count} times; give it once (a list is comma-separated)", field=name
            )


def _refuse_nul(op: Operation[Any], parts: dict[str, Any]) -> None:
    """A NUL in a path or query value names nothing stored, and PostgreSQL's text cannot carry one:
    422 naming the parameter (a body's text has its NULs removed by its model instead)."""
    named = [(name, parts[name]) for name in op.path_params]
    query = parts.get("query")
    if query is not None:
        named += [(info.alias or name, getattr(query, name)) for name, info in type(query).model_fields.items()]
    for name, value in named:
        if any("\x00" in v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)):
            raise InvalidInputError(f"{name} holds a NUL character", field=name)


def _parameters(op: Operation[Any], *, parsed_body: bool = False) -> list[inspect.Parameter]:
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [
        inspect.Parameter("request", keyword, annotation=Request),
        inspect.Parameter("response", keyword, annotation=Response),
    ]
    if not op.public:
        params.append(inspect.Parameter("caller", keyword, annotation=Annotated[Caller, Depends(authenticated)]))
    for name, description in op.path_params.items():
        params.append(inspect.Parameter(name, keyword, annotation=Annotated[str, Path(description=description)]))
    if op.query is not None:
        params.append(inspect.Parameter("query", keyword, annotation=Annotated[op.query, Query()]))
    if op.body is not None and parsed_body:  # its bytes: the endpoint parses and checks them (api/body.py)
        params.append(inspect.Parameter("body", keyword, annotation=Annotated[bytes, Depends(raw_body)]))
    elif op.body is not None:
        examples = {"example": Example(summary="an example", value=op.example)} if op.example else None
        annotation = Annotated[op.body, Body(openapi_examples=examples)]  # type: ignore[name-defined]  # built at run time
        params.append(inspect.Parameter("body", keyword, annotation=annotation))
    return params
