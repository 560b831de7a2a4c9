"""Parity: every declared operation exists on every surface, and the registry tells the truth.

Walks ``engramdb.models.operations``: each operation must have its REST route (documented under
its name), its sync and async SDK method, its ``engram`` command (on the data folder and against
a server), its MCP tool where it declares one, and its row in the generated docs; and the
permission it declares must be the one the server enforces, for every role.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import anyio
import pytest
import typer
from fastapi.routing import APIRoute

from engramdb.api.mcp.server import build_server
from engramdb.config import LLMSettings, Settings
from engramdb.core import auth
from engramdb.core.auth import PERMISSIONS, Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.devtools.generate import stale
from engramdb.models.operations import OPERATIONS
from engramdb.sdk import AsyncClient, Client
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import scope_fields
from tests.surfaces.requests import example_request

ROLES = ("agent", "host", "reviewer", "admin")


def _cli_commands() -> dict[tuple[str, ...], Any]:
    """Every command of ``engram`` by its words (typer builds them on its own copy of click)."""
    from engramdb.cli.main import app

    found: dict[tuple[str, ...], Any] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        found[path] = command
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found


def test_every_operation_has_its_rest_route_documented_under_its_name(live: LiveServer) -> None:
    routes = {(m, r.path): r for r in live.app.routes if isinstance(r, APIRoute) for m in r.methods or ()}
    with live.client(None) as http:
        document = http.get("/openapi.json").json()
    for op in OPERATIONS:
        assert (op.method, op.path) in routes, op.name
        documented = document["paths"][op.path][op.method.lower()]
        assert documented["operationId"] == op.name and documented["summary"] == op.summary
    assert len({(op.method, op.path) for op in OPERATIONS}) == len(OPERATIONS)  # no route declared twice


def test_every_operation_has_a_sync_and_an_async_sdk_method() -> None:
    for op in OPERATIONS:
        sync, awaited = getattr(Client, op.name, None), getattr(AsyncClient, op.name, None)
        assert callable(sync) and callable(awaited), op.name
        assert inspect.iscoroutinefunction(awaited) and not inspect.iscoroutinefunction(sync), op.name
        assert sync.__doc__ == awaited.__doc__ == op.summary, op.name
        path_args = [
            p for p in inspect.signature(sync).parameters.values() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        ][1 : 1 + len(op.path_params)]
        assert [p.name for p in path_args] == list(op.path_params), op.name


def test_every_operation_has_a_command_that_runs_locally_and_remotely() -> None:
    commands = _cli_commands()
    for op in OPERATIONS:
        assert op.cli is not None, f"{op.name} has no engram command"
        command = commands.get(op.cli.command)
        assert command is not None, f"engram {' '.join(op.cli.command)} is missing ({op.name})"
        options = {name for p in command.params for name in getattr(p, "opts", [])}
        assert {"--url", "--key", "--home", "--tenant", "--json"} <= options, op.name
        arguments = [p.name for p in command.params if p.param_type_name == "argument"]
        assert len(arguments) == len(op.path_params) + len(op.cli.positional), op.name


@pytest.mark.parametrize("model", [False, True], ids=["no-model", "model"])
def test_every_flagged_operation_is_an_mcp_tool_and_no_other(tmp_path: Path, model: bool) -> None:
    # A tool that asks the chat model is listed only by a server that has one (issue 31).
    llm = LLMSettings(
        base_url="http://127.0.0.1:9/v1" if model else None,
        model="scripted" if model else "",
        workers=0,
        worker_process=False,
    )
    store = SQLiteStore(tmp_path)
    service = MemoryService(store, HashingEmbedder(), Settings(home=tmp_path, embedder="hashing", llm=llm))
    server = build_server(service, lambda _ctx: Caller("t1", "k", "agent"), transport="stdio")
    tools = {t.name: t for t in anyio.run(server.list_tools)}
    flagged = {op.mcp.tool: op for op in OPERATIONS if op.mcp is not None and (model or not op.mcp.needs_model)}
    needing = {op.mcp.tool for op in OPERATIONS if op.mcp is not None and op.mcp.needs_model}
    assert needing and (needing <= set(tools)) is model
    assert set(tools) == set(flagged)
    for name, op in flagged.items():
        assert op.mcp is not None
        assert set(tools[name].input_schema["properties"]) == {arg for arg, _ in op.mcp.args}, name
        assert tools[name].description == op.mcp.description
    store.close()


def test_generated_sdk_methods_and_docs_tables_are_fresh() -> None:
    assert stale() == [], "run: python -m engramdb.devtools.generate"
    rest = (Path(__file__).resolve().parents[2] / "docs" / "rest.md").read_text()
    for op in OPERATIONS:  # docs/rest.md's table is one of the generated files; check it says so
        assert f"| `{op.method} {op.path}` | {op.summary} |" in rest, op.name


def test_every_declared_service_method_exists_and_takes_what_the_registry_passes(service: MemoryService) -> None:
    for op in OPERATIONS:
        method = service.operation(op.name)  # a KeyError names an operation no area runs
        params = list(inspect.signature(method).parameters)  # of the bound method: after self
        expected = [] if op.public else ["caller"]
        expected += [p for p in op.path_params] + (["body"] if op.body else []) + (["query"] if op.query else [])
        assert params == expected, (op.name, params, expected)  # called positionally, in this order
        if op.permission is not None:
            assert op.permission in PERMISSIONS, op.name
    with pytest.raises(KeyError):
        service.operation("no_such_operation")  # control: the lookup does refuse a name


def test_a_write_that_can_create_is_routed_as_201() -> None:
    # The route's status is the documented success; 200 is then the "already stored" answer.
    creating = [op for op in OPERATIONS if op.created_status]
    assert {op.name for op in creating} >= {"write_episode", "write_fact", "write_records"}
    assert [op.name for op in creating if op.status != 201] == []


def test_every_mcp_tool_has_a_renderer() -> None:
    from engramdb.api.mcp.tools import RENDERERS

    tools = {op.mcp.tool for op in OPERATIONS if op.mcp is not None}
    assert tools and tools <= set(RENDERERS), tools - set(RENDERERS)


@pytest.mark.parametrize("role", ROLES)
def test_the_declared_permission_is_what_the_server_enforces(live: LiveServer, role: str) -> None:
    grants = {"agent": scope_fields(), "host": {"agentId": "coder", "profileId": "default"}}
    grant = grants.get(role, {})
    token, _ = auth.create_key(live.store, tenant="t1", role=role, grant=grant, create_tenant=True)
    auth.create_key(live.store, tenant="t1", role="admin", grant={})  # revoking one admin key leaves one
    with live.client(token) as http:
        for op in OPERATIONS:
            if op.public or op.name == "revoke_key":
                continue
            assert op.permission is not None, op.name  # what not public means
            answer = http.request(**example_request(op))
            allowed = role in PERMISSIONS[op.permission].roles
            assert (answer.status_code == 403) != allowed, (op.name, role, answer.status_code, answer.text)
            if not allowed:  # the refusal names the action in words (the same table)
                assert answer.json()["message"] == f"{role} keys may not {PERMISSIONS[op.permission].action}"
