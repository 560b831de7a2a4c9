"""``Client`` and ``AsyncClient``: every operation of the server, typed with its own models.

The methods are generated from the operation registry (``methods.py``): each turns its
arguments into the operation's inputs and hands them to ``call``. The two clients differ only in
``send``, a few lines each. A host that traces with OpenTelemetry sees each request as a CLIENT
span whose ``traceparent`` the request carries (``tracing.py``).

    with Client("http://127.0.0.1:8377", api_key=KEY) as engram:
        engram.recall({"query": "which language for billing?", "limit": 5})
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, TypeVar

import httpx

from engramdb import __version__, tls
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation
from engramdb.sdk import tracing
from engramdb.sdk.errors import error_from_transport
from engramdb.sdk.methods import AsyncMethods, SyncMethods
from engramdb.sdk.operations import Call, call_for
from engramdb.sdk.renamed import RenamedMethods

T = TypeVar("T")
DEFAULT_TIMEOUT = 10.0


def _options(base_url: str, api_key: str | None, timeout: float) -> dict[str, Any]:
    headers = {"User-Agent": f"engramdb-sdk/{__version__}", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return {"base_url": base_url, "headers": headers, "timeout": timeout, "verify": tls.context()}


def _timeout(seconds: float | None) -> float | httpx._client.UseClientDefault:
    return httpx.USE_CLIENT_DEFAULT if seconds is None else seconds


class Client(SyncMethods, RenamedMethods):
    """Blocking client. Thread-safe: one instance may serve many threads."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url
        self._http = httpx.Client(**_options(base_url, api_key, timeout), transport=transport)

    def call(self, op: Operation[T], inputs: Inputs) -> T:
        """Run an operation with validated inputs and return its answer."""
        return self.send(call_for(op, inputs))

    def send(self, call: Call[T], *, timeout: float | None = None) -> T:
        """Send one call and return its parsed answer; errors are typed ``EngramError``s."""
        try:
            with tracing.sent(call.method, call.route, call.operation, self.base_url) as sent:
                response = self._http.request(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.json,
                    headers=sent.headers,
                    timeout=_timeout(timeout),
                )
                sent.answered(response.status_code)
        except httpx.TransportError as exc:
            raise error_from_transport(exc, f"{call.method} {call.path}") from exc
        return call.finish(response)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(AsyncMethods, RenamedMethods):
    """Asyncio client; the same methods as ``Client``, awaited."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url
        self._http = httpx.AsyncClient(**_options(base_url, api_key, timeout), transport=transport)

    async def call(self, op: Operation[T], inputs: Inputs) -> T:
        """Run an operation with validated inputs and return its answer."""
        return await self.send(call_for(op, inputs))

    async def send(self, call: Call[T], *, timeout: float | None = None) -> T:
        """Send one call and return its parsed answer; errors are typed ``EngramError``s."""
        try:
            with tracing.sent(call.method, call.route, call.operation, self.base_url) as sent:
                response = await self._http.request(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.json,
                    headers=sent.headers,
                    timeout=_timeout(timeout),
                )
                sent.answered(response.status_code)
        except httpx.TransportError as exc:
            raise error_from_transport(exc, f"{call.method} {call.path}") from exc
        return call.finish(response)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
