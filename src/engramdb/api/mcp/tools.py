"""MCP tools built from the operation registry.

A tool is an operation seen by a model: its arguments are some of the operation's inputs under
names a model reads easily (``subject`` for ``subjectKey``), described where the operation's own
words would not do; the inputs the server fixes (``origin: derived``, provenance) are filled in;
no argument is a scope field. A call validates its arguments, builds the operation's inputs
exactly as REST would, runs the same service method, and renders the answer as text.
"""

from __future__ import annotations

import functools
import inspect
import logging
import operator
import uuid
from collections.abc import Callable, Mapping
from typing import Annotated, Any, get_args

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from engramdb.api.lane import FairLane, line_of, run_in
from engramdb.api.mcp import assist_text, knowledge_text, text
from engramdb.api.problems import problem_body
from engramdb.contract.bounds import TEXT_CAPS
from engramdb.core.auth import Caller
from engramdb.core.operations import run
from engramdb.core.service import MemoryService
from engramdb.errors import EngramError, InternalError
from engramdb.logs import request_id
from engramdb.models.inputs import build_inputs, wire_fields
from engramdb.models.operation import Mcp, McpArg, McpContext, Operation
from engramdb.models.operations import BY_NAME
from engramdb.models.problems import validation_problem

log = logging.getLogger(__name__)

CallerOf = Callable[[Context], Caller]


RENDERERS: dict[str, Callable[[Any, dict[str, Any]], text.ToolOutput]] = {
    **text.RENDERERS,
    **knowledge_text.RENDERERS,
    **assist_text.RENDERERS,
}


def render(tool: str, answer: object, args: dict[str, Any]) -> text.ToolOutput:
    """The text (and a small structured summary) a tool returns for an operation's answer."""
    return RENDERERS[tool](answer, args)


def error_result(body: dict[str, Any]) -> CallToolResult:
    """A tool error: ``<code>: <message>`` for the model, the problem JSON as structured content."""
    return CallToolResult(
        content=[TextContent(type="text", text=f"{body['code']}: {body['message']}")],
        structured_content=body,
        is_error=True,
    )


def tool_annotations(spec: Mcp) -> ToolAnnotations:
    if spec.read_only:
        return ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=spec.destructive, idempotent_hint=spec.idempotent, open_world_hint=False
    )


def tool_function(
    op: Operation[Any],
    service: MemoryService,
    caller_of: CallerOf,
    transport: str,
    lane: FairLane | None = None,
) -> Any:
    """The function the MCP server registers for ``op``'s tool: its signature is the tool's schema.

    A tool that recalls runs in ``lane`` (the REST server's recall lane) when one is given, as the
    ``recall`` route does; the others run in the MCP package's worker threads."""
    spec = op.mcp
    assert spec is not None
    names = {arg.fills: name for name, arg in spec.args if arg.fills}  # input field -> argument

    def tool(ctx: Context, **args: Any) -> CallToolResult:
        token = request_id.set(request_id.get() or uuid.uuid4().hex[:16])  # stdio calls have no HTTP id
        try:
            return _call(ctx, args)
        finally:
            request_id.reset(token)

    def _call(ctx: Context, args: dict[str, Any]) -> CallToolResult:
        try:
            caller = caller_of(ctx)
            target, values = _plan(op, spec, McpContext(transport, caller.grant, args))
            answer = run(service, target, caller, build_inputs(target, values))
            said, structured = render(spec.tool, answer, args)
        except EngramError as error:
            if error.http_status >= 500 and error.http_status != 501:  # 501: no model configured, not a fault
                log.error(
                    "MCP tool %s failed (request %s): %s", spec.tool, request_id.get(), error.message, exc_info=error
                )
            return error_result(_named_for_tool(error, names))
        except ValidationError as error:
            return error_result(validation_problem(list(error.errors())))
        except Exception:  # the tool boundary: a model gets an error result, the log the traceback
            log.exception("MCP tool %s failed", spec.tool)
            return error_result(problem_body(InternalError("internal error; the server logged it")))
        return CallToolResult(content=[TextContent(type="text", text=said)], structured_content=structured)

    served: Callable[..., Any] = tool
    if lane is not None and recalls(op):

        async def in_lane(ctx: Context, **args: Any) -> CallToolResult:
            call = functools.partial(tool, ctx, **args)
            if not recalls(op, args):  # recent_episodes without `about`: a listing, in the package's threads
                return await anyio.to_thread.run_sync(call)
            return await run_in(lane, line_of(_caller_or_none(caller_of, ctx)), call)  # REST's lane and lines

        served = in_lane
    served.__name__ = spec.tool
    params = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)]
    params += [_parameter(op, name, arg) for name, arg in spec.args]
    served.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    served.__annotations__ = {p.name: p.annotation for p in params}
    return served


def recalls(op: Operation[Any], args: Mapping[str, Any] | None = None) -> bool:
    """Whether ``op``'s tool may run a recall (given ``args``: whether this call does): the operation
    itself, or the variant it turns into when the call names what the variant needs."""
    variant = op.mcp.variant if op.mcp is not None else None
    if op.in_recall_lane:
        return True
    if variant is None or not BY_NAME[variant.operation].in_recall_lane:
        return False
    return args is None or args.get(variant.when) not in (None, "")


def _plan(op: Operation[Any], spec: Mcp, ctx: McpContext) -> tuple[Operation[Any], dict[str, Any]]:
    """Which operation a call runs, and with which wire-named inputs."""
    if spec.variant is not None and ctx.args.get(spec.variant.when) not in (None, ""):
        return BY_NAME[spec.variant.operation], dict(spec.variant.inputs(ctx))
    given = {arg.fills: ctx.args[name] for name, arg in spec.args if arg.fills and ctx.args.get(name) not in (None, "")}
    return op, {**given, **(spec.fixed(ctx) if spec.fixed else {})}


def _named_for_tool(error: EngramError, names: dict[str, str]) -> dict[str, Any]:
    """The problem JSON, its field named as the tool's argument (``subject``, not ``subjectKey``)."""
    body = problem_body(error)
    if error.field in names:
        body["field"] = names[error.field]
        body["message"] = body["message"].replace(error.field, names[error.field])
    return body


def _parameter(op: Operation[Any], name: str, arg: McpArg) -> inspect.Parameter:
    annotation, metadata, default = _declared(op, arg)
    if arg.default is not ...:
        default = arg.default
    if default is None and not _admits_none(annotation):
        # The schema advertises the default: the tool must take it (a null means "the operation's
        # own default", see _plan), so the type says null as well.
        annotation = annotation | None
    elif default is inspect.Parameter.empty and _admits_none(annotation):
        annotation = _without_none(annotation)  # a required argument is a value, not null
    bounds = dict(arg.bounds)
    if arg.fills is not None and arg.fills in TEXT_CAPS:  # caps a validator checks: say them in the schema
        bounds.setdefault("max_length", TEXT_CAPS[arg.fills])
    described = Field(description=arg.description, **bounds) if arg.description else Field(**bounds)
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[annotation, *metadata, described]
    )


def _declared(op: Operation[Any], arg: McpArg) -> tuple[Any, list[Any], Any]:
    """The type, constraints and default the operation declares for an argument's input."""
    if arg.fills is None or arg.fills in op.path_params:
        return arg.annotation or str, [], inspect.Parameter.empty
    fields = {**wire_fields(op.body), **wire_fields(op.query)}
    info = fields[arg.fills]
    default = inspect.Parameter.empty if info.is_required() else info.get_default(call_default_factory=True)
    return info.annotation, list(info.metadata), default


def _admits_none(annotation: Any) -> bool:
    return annotation is Any or annotation is None or type(None) in get_args(annotation)


def _without_none(annotation: Any) -> Any:
    kept = [a for a in get_args(annotation) if a is not type(None)]
    return functools.reduce(operator.or_, kept) if kept else annotation


def _caller_or_none(caller_of: CallerOf, ctx: Context) -> Caller | None:
    """The call's caller, or None when it has none (the tool itself then refuses the call)."""
    try:
        return caller_of(ctx)
    except EngramError:
        return None
