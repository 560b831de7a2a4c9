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
from starlette.types import Receive, Scope, Send

from engramdb.api.lane import FairLane
from engramdb.core.service import MemoryService

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
