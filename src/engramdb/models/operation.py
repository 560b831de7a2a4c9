"""What declaring an operation means: one ``Operation`` per thing EngramDB can do.

The REST routes, the SDK's methods, the ``engram`` commands and the MCP tools are all built from
these declarations (``engramdb.models.operations``); a surface never states a path, a permission
or an argument name of its own. The service method an operation calls is named, not imported,
so this module (and the SDK that reads it) needs nothing of the server.

How a service method is called: ``method(caller, *path_values, body, query)``, where ``body``
and ``query`` are passed only when the operation declares them (health alone takes no caller).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

Out = TypeVar("Out")
Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]


@dataclass(frozen=True)
class Cli:
    """How ``engram`` offers an operation (the same command on the data folder and remotely).

    Path parameters become positional arguments; body and query fields become options named
    after the wire field in kebab case (``subjectKey`` -> ``--subject``, see ``OPTION_NAMES``);
    boolean fields are flags; the scope fields are ``--agent-id``, ``--profile-id``,
    ``--privacy``, ``--participant`` and ``--sandbox-eligible true|false``.
    """

    command: tuple[str, ...]  # ("facts", "correct") or ("recall",)
    positional: tuple[str, ...] = ()  # fields taken as positional arguments, after the path's
    defaults: Mapping[str, Any] = field(default_factory=dict)  # filled when not given (callables: called)
    local_scope: bool = False  # on the data folder, an unnamed scope is this machine's user's
    raw: Mapping[str, str] = field(default_factory=dict)  # flag -> answer field printed as is
    done: str | None = None  # the line people see after success, formatted with the path values
    id_prefix_of: str | None = None  # path ids may be unique prefixes of ids this operation lists
    id_prefix_query: Mapping[str, Any] = field(default_factory=dict)  # what that listing is asked
    id_key: str = "id"  # the field of the listing's items that holds the ids
    merge_from: str | None = None  # options change the answer of this operation, not replace it
    embeds_locally: bool = False  # on the data folder, embed what was written before returning
    needs_model: bool = False  # on the data folder, load the embedding model (recall, health)
    fails_unless: str | None = None  # a boolean field of the answer: the command exits 1 when it is false
    tenant: Literal["existing", "create", "on_request"] = "existing"  # on the data folder: may the
    # command start a tenant? create: a write starts it; on_request: only with --create-tenant


@dataclass(frozen=True)
class McpArg:
    """A tool argument: the operation input it fills (a body or query field, or a path parameter),
    and what the tool says of it where that differs from the operation's own model."""

    fills: str | None  # None: an argument of the tool alone (a variant reads it)
    description: str | None = None
    default: Any = ...  # ... = the model's default (required if the model has none)
    bounds: Mapping[str, Any] = field(default_factory=dict)  # ge, le, pattern, max_length, ...
    annotation: Any = None  # the type, where no model declares the field (path parameters: str)


@dataclass(frozen=True)
class McpContext:
    """What a fixed tool input may depend on: the transport, the caller's grant, the arguments."""

    transport: str
    grant: Mapping[str, Any]
    args: Mapping[str, Any]


@dataclass(frozen=True)
class McpVariant:
    """When ``when`` is among the arguments, the tool calls ``operation`` with ``inputs`` instead."""

    when: str
    operation: str
    inputs: Callable[[McpContext], Mapping[str, Any]]


@dataclass(frozen=True)
class Mcp:
    """How the MCP server offers an operation to a model. No tool takes a scope field."""

    tool: str
    description: str
    args: tuple[tuple[str, McpArg], ...]  # (tool argument, what it fills), in the tool's order
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    fixed: Callable[[McpContext], Mapping[str, Any]] | None = None  # inputs the server sets
    variant: McpVariant | None = None
    needs_model: bool = False  # it asks the chat model: listed only by a server that has one


@dataclass(frozen=True)
class Operation(Generic[Out]):
    """One operation: its route, models, permission, docs and how each surface offers it."""

    name: str  # snake_case: the service method, the SDK method, the REST operationId
    method: Method
    path: str  # /v1/facts/{fact_id}/correct
    summary: str
    output: type[Out] | None  # None: 204 No Content (an Operation[None])
    permission: str | None  # an engramdb.core.auth permission; None: no key needed
    tag: str
    description: str = ""
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    path_params: Mapping[str, str] = field(default_factory=dict)  # name -> description
    status: int = 200
    created_status: bool = False  # 201 when the answer's ``created`` is true, else 200
    errors: tuple[int, ...] = ()  # statuses it can answer beyond 401, 403, 422, 500 and 503
    example: Mapping[str, Any] | None = None  # an example body, for the docs
    shorthand: str | None = None  # a plain value given as the body means {shorthand: value}
    body_optional: bool = False  # the SDK may send no body ({}), e.g. an approval without a reason
    body_arg: str = "body"  # the SDK's name for the body argument
    cli: Cli | None = None
    mcp: Mcp | None = None
    former_paths: tuple[str, ...] = ()  # paths it answered at before a rename, kept for one release
    in_recall_lane: bool = False  # REST runs it in the recall lane (Settings.recall_threads): CPU-bound work

    @property
    def public(self) -> bool:
        """True when no key is needed (the health check)."""
        return self.permission is None

    def answer_status(self, answer: object) -> int:
        """The success status for an answer: 201 for a created memory, 204 for no answer."""
        if answer is None:
            return 204
        if self.created_status:
            return 201 if getattr(answer, "created", False) else 200
        return self.status


# Wire field -> CLI option, where the kebab-case name would be long or unclear.
OPTION_NAMES: Mapping[str, str] = {
    "subjectKey": "--subject",
    "privacyScope": "--privacy",
    "participantScopeHash": "--participant",
    "externalSessionId": "--session",
    "sessionId": "--session",
}
