"""``Client`` and ``AsyncClient``: every REST endpoint, typed with the server's own models.

The two clients are not copies of each other. Each endpoint is declared once in
``operations.py`` as a function that builds a ``Call`` (request + reader); a client method is
that function bound to the client's transport by ``_blocking`` or ``_awaiting``. The clients
differ only in ``send``, which is a few lines each.

    with Client("http://127.0.0.1:8377", api_key=KEY) as engram:
        engram.recall({"query": "which language for billing?", "limit": 5})
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from engramdb import __version__
from engramdb.sdk import operations as op
from engramdb.sdk.errors import error_from_transport
from engramdb.sdk.operations import Call

T = TypeVar("T")
P = ParamSpec("P")
DEFAULT_TIMEOUT = 10.0


@functools.cache
def _tls() -> ssl.SSLContext:
    # httpx builds a verifying context per client (~0.1 s); one per process is enough.
    return httpx.create_ssl_context()


def _options(base_url: str, api_key: str | None, timeout: float) -> dict[str, Any]:
    headers = {"User-Agent": f"engramdb-sdk/{__version__}", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return {"base_url": base_url, "headers": headers, "timeout": timeout, "verify": _tls()}


def _timeout(seconds: float | None) -> float | httpx._client.UseClientDefault:
    return httpx.USE_CLIENT_DEFAULT if seconds is None else seconds


def _blocking(build: Callable[P, Call[T]]) -> Callable[Concatenate[Client, P], T]:
    """Bind an operation to ``Client.send``: ``client.name(args)`` sends ``build(args)``."""

    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.send(build(*args, **kwargs))

    functools.update_wrapper(method, build)
    return method


def _awaiting(build: Callable[P, Call[T]]) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
    """Bind an operation to ``AsyncClient.send``: ``await client.name(args)``."""

    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.send(build(*args, **kwargs))

    functools.update_wrapper(method, build)
    return method


class Client:
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

    def send(self, call: Call[T], *, timeout: float | None = None) -> T:
        """Send one call and return its parsed answer; errors are typed ``EngramError``s."""
        try:
            response = self._http.request(call.method, call.path, params=call.params,
                                          json=call.json, timeout=_timeout(timeout))  # fmt: skip
        except httpx.TransportError as exc:
            raise error_from_transport(exc, f"{call.method} {call.path}") from exc
        return call.finish(response)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    health = _blocking(op.health)
    write_episode = _blocking(op.write_episode)
    write_episode_batch = _blocking(op.write_episode_batch)
    write_fact = _blocking(op.write_fact)
    get_episode = _blocking(op.get_episode)
    get_fact = _blocking(op.get_fact)
    list_facts = _blocking(op.list_facts)
    correct_fact = _blocking(op.correct_fact)
    retract_fact = _blocking(op.retract_fact)
    fact_history = _blocking(op.fact_history)
    list_tombstones = _blocking(op.list_tombstones)
    lift_tombstone = _blocking(op.lift_tombstone)
    review_queue = _blocking(op.review_queue)
    approve = _blocking(op.approve)
    reject = _blocking(op.reject)
    edit_and_approve = _blocking(op.edit_and_approve)
    audit = _blocking(op.audit)
    get_policy = _blocking(op.get_policy)
    put_policy = _blocking(op.put_policy)
    recall = _blocking(op.recall)
    create_key = _blocking(op.create_key)
    list_keys = _blocking(op.list_keys)
    revoke_key = _blocking(op.revoke_key)


class AsyncClient:
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

    async def send(self, call: Call[T], *, timeout: float | None = None) -> T:
        """Send one call and return its parsed answer; errors are typed ``EngramError``s."""
        try:
            response = await self._http.request(call.method, call.path, params=call.params,
                                                json=call.json, timeout=_timeout(timeout))  # fmt: skip
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

    health = _awaiting(op.health)
    write_episode = _awaiting(op.write_episode)
    write_episode_batch = _awaiting(op.write_episode_batch)
    write_fact = _awaiting(op.write_fact)
    get_episode = _awaiting(op.get_episode)
    get_fact = _awaiting(op.get_fact)
    list_facts = _awaiting(op.list_facts)
    correct_fact = _awaiting(op.correct_fact)
    retract_fact = _awaiting(op.retract_fact)
    fact_history = _awaiting(op.fact_history)
    list_tombstones = _awaiting(op.list_tombstones)
    lift_tombstone = _awaiting(op.lift_tombstone)
    review_queue = _awaiting(op.review_queue)
    approve = _awaiting(op.approve)
    reject = _awaiting(op.reject)
    edit_and_approve = _awaiting(op.edit_and_approve)
    audit = _awaiting(op.audit)
    get_policy = _awaiting(op.get_policy)
    put_policy = _awaiting(op.put_policy)
    recall = _awaiting(op.recall)
    create_key = _awaiting(op.create_key)
    list_keys = _awaiting(op.list_keys)
    revoke_key = _awaiting(op.revoke_key)
