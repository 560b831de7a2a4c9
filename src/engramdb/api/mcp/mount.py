"""``/mcp`` in the REST server, built when a host first asks for it.

The MCP SDK takes about a second to import and the tool set a tenth of one to build; a server
that no MCP host talks to should not pay that at every start. The first request builds the
endpoint off the event loop, starts its session manager in the lifespan's task group, and every
request after it goes straight through.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup
from starlette.types import Message, Receive, Scope, Send

from engramdb.api.body import refuse_many_values
from engramdb.api.lane import FairLane
from engramdb.api.problems import error_response
from engramdb.core.service import MemoryService
from engramdb.errors import PayloadTooLargeError

if TYPE_CHECKING:
    from engramdb.api.mcp.transports import HttpEndpoint


class McpMount:
    """An ASGI app for ``/mcp``: the streamable HTTP endpoint, made on its first request."""

    def __init__(self, service: MemoryService, path: str = "/mcp", lane: FairLane | None = None) -> None:
        self.service = service
        self.path = path
        self.lane = lane  # the REST server's recall lane: MCP's recalls take their turn in it too
        self._endpoint: HttpEndpoint | None = None
        self._group: TaskGroup | None = None
        self._lock = anyio.Lock()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Keep the endpoint's session manager alive while the app runs (enter it in the lifespan)."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None
                group.cancel_scope.cancel()  # stops the session manager, if one was started

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self._endpoint or await self._start()
        if scope["type"] == "http" and scope["method"] == "POST":  # a JSON-RPC message, parsed on the loop
            raw, receive = await _buffered(receive)
            try:
                refuse_many_values(raw)
            except PayloadTooLargeError as error:
                await error_response(error)(scope, receive, send)
                return
        await endpoint.app(scope, receive, send)

    async def _start(self) -> HttpEndpoint:
        async with self._lock:
            if self._endpoint is not None:  # another request built it while this one waited
                return self._endpoint
            if self._group is None:
                raise RuntimeError("the MCP endpoint serves only while the app's lifespan runs")
            endpoint = await anyio.to_thread.run_sync(self._build)
            await self._group.start(_serve, endpoint)
            self._endpoint = endpoint
            return endpoint

    def _build(self) -> HttpEndpoint:
        from engramdb.api.mcp.transports import http_endpoint  # the SDK's import, paid here

        return http_endpoint(self.service, self.path, self.lane)


async def _serve(endpoint: HttpEndpoint, *, task_status: anyio.abc.TaskStatus[None]) -> None:
    async with endpoint.running():
        task_status.started()
        await anyio.sleep_forever()


async def _buffered(receive: Receive) -> tuple[bytes, Receive]:
    """The whole body (the guard bounds its size), and a ``receive`` that hands it on as one message."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away: nothing to buffer
            return b"", _replay(message, receive)
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            raw = b"".join(chunks)
            return raw, _replay({"type": "http.request", "body": raw, "more_body": False}, receive)


def _replay(first: Message, receive: Receive) -> Receive:
    given = False

    async def replayed() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return first

    return replayed
