"""``engram`` commands built from the operation registry: one command per operation.

A command's parameters are read off the operation: path parameters are positional arguments,
body and query fields are options (booleans are flags), the five scope fields are the same five
options everywhere. Every command runs on the data folder, or against a server with ``--url``
and ``--key``, and prints a table for people or the answer's JSON with ``--json``.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import re
import types
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from engramdb.cli.context import DEFAULT_TENANT
from engramdb.cli.invoke import Param, run
from engramdb.contract.events import FIELD_DESCRIPTIONS
from engramdb.errors import InvalidInputError
from engramdb.models.base import SCOPE_NAMES
from engramdb.models.inputs import scope_slot, wire_fields
from engramdb.models.operation import OPTION_NAMES, Operation

HIDDEN = {"schemaVersion", "eventType"}  # constants of the contract: nothing to choose
SCOPE_OPTIONS = {  # wire name -> (option, help)
    "agentId": ("--agent-id", "agentId of the scope"),
    "profileId": ("--profile-id", "profileId of the scope"),
    "privacyScope": ("--privacy", "private or shared"),
    "participantScopeHash": ("--participant", "participantScopeHash (64 hex: hash_scope of the participant's id)"),
    "sandboxEligible": ("--sandbox-eligible", "true or false"),
}


def command_for(op: Operation[Any]) -> Callable[..., None]:
    """The command function of ``op``: its signature is what typer turns into arguments."""
    params = _params(op)

    def command(**given: Any) -> None:
        run(op, params, given)

    command.__name__ = op.name
    command.__doc__ = op.summary if not op.description else f"{op.summary}\n\n{op.description}"
    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, annotation=p.annotation, default=p.default)
            for p in params
        ]
    )
    command.__annotations__ = {}
    return command


def _params(op: Operation[Any]) -> list[Param]:
    assert op.cli is not None
    params = [
        Param(
            f"path_{i}",
            name,
            "path",
            Annotated[str, typer.Argument(help=help_, metavar=_snake(name).upper(), show_default=False)],
            ...,
        )
        for i, (name, help_) in enumerate(op.path_params.items())
    ]
    fields = {**wire_fields(op.query), **wire_fields(op.body)}
    # A scope field of an operation that takes no scope is a plain field (forget's participant).
    scoped = SCOPE_NAMES if scope_slot(op) is not None else ()
    for name in op.cli.positional:
        params.append(
            Param(
                f"arg_{_snake(name)}",
                name,
                "field",
                Annotated[
                    str,
                    typer.Argument(
                        help=_describe(name, fields[name]), metavar=_snake(name).upper(), show_default=False
                    ),
                ],
                ...,
            )
        )
    for name, info in fields.items():
        if name in op.cli.positional or name in HIDDEN or name in scoped or name in ("scope", "grant"):
            continue
        param = _field_param(name, info)
        if name in op.cli.defaults:
            default = op.cli.defaults[name]
            param = _with_help(param, f" (default: {'now' if callable(default) else json.dumps(default)})")
        elif info.is_required():
            param = _with_help(param, " (required)")
        params.append(param)
    if any(n in fields for n in (*scoped, "scope", "grant")):
        params += [_scope_param(name, op.cli.local_scope) for name in SCOPE_NAMES]
    return params + _meta_params(op)


def _field_param(name: str, info: FieldInfo) -> Param:
    option = OPTION_NAMES.get(name, "--" + re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower())
    help_ = _describe(name, info)
    base, choices = _plain_type(info.annotation)
    if choices:
        help_ += f" ({' | '.join(choices)})"
    if base is bool and info.default is False:
        return Param(f"opt_{_snake(name)}", name, "field", Annotated[bool, typer.Option(option, help=help_)], False)
    if base is bool:
        flags = f"{option}/--no-{option[2:]}"
        return Param(f"opt_{_snake(name)}", name, "field", Annotated[bool | None, typer.Option(flags, help=help_)])
    if base in (str, int, float):
        return Param(f"opt_{_snake(name)}", name, "field", Annotated[base | None, typer.Option(option, help=help_)])
    if base is list:
        return Param(
            f"opt_{_snake(name)}",
            name,
            "field",
            Annotated[list[str] | None, typer.Option(option, help=f"{help_} (repeat for more)")],
        )
    as_json = Annotated[str | None, typer.Option(option, help=f"{help_} (JSON)")]
    return Param(f"opt_{_snake(name)}", name, "field", as_json, parse=functools.partial(_json_option, option))


def _describe(name: str, info: FieldInfo) -> str:
    return info.description or FIELD_DESCRIPTIONS.get(name, "")


def _with_help(param: Param, more: str) -> Param:
    """The same parameter with ``more`` added to its help text."""
    base, *extras = get_args(param.annotation)
    info = copy.copy(extras[0])
    info.help = f"{info.help or ''}{more}"
    return Param(param.name, param.wire, param.kind, Annotated[base, info], param.default, param.parse)


def _scope_param(name: str, local_default: bool) -> Param:
    option, help_ = SCOPE_OPTIONS[name]
    if local_default:
        help_ += " (on the data folder default: this machine's user's scope)"
    parse: Callable[[Any], Any] | None = None
    if name == "sandboxEligible":
        parse = functools.partial(_truth, "--sandbox-eligible")
    return Param(
        f"scope_{_snake(name)}", name, "scope", Annotated[str | None, typer.Option(option, help=help_)], parse=parse
    )


# The options every command has: how to print, and where the data is (a data folder or a server).
_COMMON = [
    Param("as_json", "json", "meta", Annotated[bool, typer.Option("--json", help="print the answer as JSON")], False),
    Param(
        "tenant",
        "tenant",
        "meta",
        Annotated[
            str | None,
            typer.Option(
                "--tenant", help=f"tenant on the data folder (default {DEFAULT_TENANT}); a server takes the key's"
            ),
        ],
    ),
    Param(
        "home",
        "home",
        "meta",
        Annotated[str | None, typer.Option("--home", help="data folder (default ./.engram or ENGRAM_HOME)")],
    ),
    Param(
        "url",
        "url",
        "meta",
        Annotated[
            str | None,
            typer.Option("--url", envvar="ENGRAM_URL", help="ask this running server instead of the data folder"),
        ],
    ),
    Param(
        "key",
        "key",
        "meta",
        Annotated[
            str | None,
            typer.Option("--key", envvar="ENGRAM_KEY", help="the key to ask the server with (with --url)"),
        ],
    ),
]
_BODY = Param(
    "body_json",
    "body",
    "meta",
    Annotated[
        str | None,
        typer.Option("--body", help="the whole JSON body: text, @file, or - for stdin (options override its fields)"),
    ],
)
_CREATE_TENANT = Param(
    "create_tenant",
    "create_tenant",
    "meta",
    Annotated[
        bool,
        typer.Option("--create-tenant", help="create --tenant if missing (data folder; default is made on first use)"),
    ],
    False,
)


def _meta_params(op: Operation[Any]) -> list[Param]:
    assert op.cli is not None
    meta = list(_COMMON)
    if op.body is not None:
        meta.append(_BODY)
    if op.cli.tenant != "existing":
        meta.append(_CREATE_TENANT)
    for flag, field in op.cli.raw.items():
        meta.append(
            Param(f"raw_{field}", field, "raw", Annotated[bool, typer.Option(flag, help=f"print only {field}")], False)
        )
    return meta


def _json_option(option: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise InvalidInputError(f"{option} is not JSON: {error}", field=option) from None


def _truth(option: str, text: str) -> bool:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    raise InvalidInputError(f"{option} must be true or false", field=option)


def _plain_type(annotation: Any) -> tuple[Any, list[str]]:
    """The base type of a field for the command line, and its choices if it is a Literal."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _plain_type(args[0])
    if origin in (Union, types.UnionType):
        return _plain_type(next(a for a in args if a is not type(None)))
    if origin is Literal:
        return str, [str(a) for a in args]
    inner = get_args(args[0])[0] if origin is list and get_origin(args[0]) is Annotated else args[0] if args else None
    if origin is list and (inner is str or get_origin(inner) is Literal):  # (a constrained str is a str)
        return list, [str(a) for a in get_args(inner)]
    if origin in (list, dict) or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return dict, []
    return annotation, []


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
