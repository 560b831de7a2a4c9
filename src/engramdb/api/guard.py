"""The door in front of every route: what is refused before a request costs anything.

In this order, before the application reads a byte of the body:

1. a declared body (``Content-Length``) over the limit is refused 413; a streamed one is cut off
   with 413 as soon as it passes the limit, so no request holds more than the limit in memory;
2. a request to ``/v1/``, ``/mcp`` or a dashboard part (``/ui/part/``, whose forms send the key
   too) that carries a key or a body is authenticated (401 without a valid key), so an anonymous
   client cannot make the server read, buffer or parse anything;
   the caller rides in the ASGI scope to the route, which does not look the key up again;
3. the key's request budget is charged (429 with ``Retry-After`` when it is spent);
4. past ``max_in_flight`` requests being served at once, a keyed request is refused at once
   (503 ``overloaded`` with ``Retry-After``) instead of joining a queue that only grows; unless
   its key has none in flight, up to one and a half times the limit (rounded up), or its tenant has
   none in flight, up to twice it. So a key that holds every place cannot shut out its tenant's other keys
   (one agent of a team's tenant cannot starve the rest), and a tenant's many keys cannot shut out
   the other tenants (the last places are theirs). Tenant and key are read from the token before
   it is checked (its check comes next).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import NamedTuple

import anyio.to_thread
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engramdb.api.problems import error_response
from engramdb.core import auth
from engramdb.errors import EngramError, OverloadedError, PayloadTooLargeError, RateLimitedError
from engramdb.storage.port import Store

# The ASGI scope key under which the guard hands the authenticated caller to the route or the MCP tools.
CALLER_KEY = "engramdb.caller"
_KEYED_PREFIXES = ("/v1/", "/mcp", "/ui/part/")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    """A token bucket per key: ``rate`` requests a second on average, bursts of ``burst``.

    Per process and in memory (a restart refills every bucket). The least recently used buckets
    are dropped past ``max_keys``: a dropped bucket comes back full, which only ever errs towards
    letting a request through.
    """

    def __init__(self, rate: float, burst: int, max_keys: int = 10_000) -> None:
        self.rate, self.burst, self.max_keys = rate, max(1, burst), max_keys
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def wait_seconds(self, key: str, now: float | None = None) -> float:
        """Charge one request to ``key``; return 0 when it may proceed, else the seconds to wait."""
        now = time.monotonic() if now is None else now
        bucket = self._buckets.pop(key, None) or _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        self._buckets[key] = bucket
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.rate


class RequestGuard:
    """ASGI middleware: body limit, key first, rate limit (see the module docstring)."""

    def __init__(
        self, app: ASGIApp, store: Store, max_body_bytes: int, limiter: RateLimiter | None, max_in_flight: int = 0
    ) -> None:
        self.app, self.store, self.max_body_bytes, self.limiter = app, store, max_body_bytes, limiter
        self.max_in_flight, self.in_flight = max_in_flight, 0
        # Requests in flight by the tenant, and by the key, their token names.
        self._by_tenant: dict[str, int] = {}
        self._by_key: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        keyed = scope["path"].startswith(_KEYED_PREFIXES)
        try:
            self._check_declared_length(headers)
            claimed = _claimed(headers) if keyed else _Claim("", "")
            if keyed and self.max_in_flight and not self._admits(claimed):
                raise self._overloaded()
            if keyed and _carries_key_or_body(scope, headers):
                scope[CALLER_KEY] = await self._caller(headers)  # in place: outer layers read the route
                if self.max_in_flight and not self._admits(claimed):  # others came in while the key was checked
                    raise self._overloaded()
        except EngramError as error:
            await _refuse(error, scope, send)
            return
        self._count(keyed, claimed, 1)  # no await since the last check; one event loop: no lock needed
        try:
            await self.app(scope, self._bounded(receive), send)
        finally:
            self._count(keyed, claimed, -1)

    def _overloaded(self) -> OverloadedError:
        return OverloadedError(
            f"the server is serving its limit of {self.max_in_flight} requests at once; retry shortly",
            retryAfterSeconds=1,
        )

    def _admits(self, claim: _Claim) -> bool:
        """Whether a request of ``claim``'s key and tenant is served now (the module docstring, step 4)."""
        limit = self.max_in_flight
        if self.in_flight < limit:
            return True
        if not self._by_tenant.get(claim.tenant):
            return self.in_flight < 2 * limit
        return not self._by_key.get(claim.key) and self.in_flight < limit + (limit + 1) // 2  # 1.5x, rounded up

    def _count(self, keyed: bool, claim: _Claim, step: int) -> None:
        if not keyed:
            return
        self.in_flight += step
        _add(self._by_tenant, claim.tenant, step)
        _add(self._by_key, claim.key, step)

    def _check_declared_length(self, headers: Headers) -> None:
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body_bytes):
            raise PayloadTooLargeError(self._too_large(), field="body", limitBytes=self.max_body_bytes)

    async def _caller(self, headers: Headers) -> auth.Caller:
        token = auth.bearer_token(headers.get("authorization", ""))
        caller = await anyio.to_thread.run_sync(auth.authenticate, self.store, token)
        if self.limiter is not None:
            wait = self.limiter.wait_seconds(caller.key_name)
            if wait > 0:
                raise RateLimitedError(
                    f"this key is over its rate limit ({self.limiter.rate:g} requests/s, bursts of "
                    f"{self.limiter.burst}); retry after {math.ceil(wait)} s",
                    retryAfterSeconds=math.ceil(wait),
                )
        return caller

    def _bounded(self, receive: Receive) -> Receive:
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:  # FastAPI re-raises an HTTPException met while reading
                    raise HTTPException(413, self._too_large())
            return message

        return bounded

    def _too_large(self) -> str:
        return f"the body is larger than this server's limit of {self.max_body_bytes} bytes (ENGRAM_MAX_BODY_BYTES)"


class _Claim(NamedTuple):
    """The tenant and the key (``auth.key_name``) a request's token names, unchecked; both "" without
    a token."""

    tenant: str
    key: str


def _claimed(headers: Headers) -> _Claim:
    """The claim of a bearer token (``egm.<tenant>.<keyId>.<secret>``)."""
    parts = (auth.bearer_token(headers.get("authorization", "")) or "").split(".")
    return _Claim(parts[1], auth.key_name(parts[1], parts[2])) if len(parts) == 4 else _Claim("", "")


def _add(counts: dict[str, int], name: str, step: int) -> None:
    held = counts.get(name, 0) + step
    if held:
        counts[name] = held
    else:
        del counts[name]


def _carries_key_or_body(scope: Scope, headers: Headers) -> bool:
    has_body = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
    return "authorization" in headers or (scope["method"] in _BODY_METHODS and has_body)


async def _refuse(error: EngramError, scope: Scope, send: Send) -> None:
    response = error_response(error)

    async def no_body() -> Message:  # the refusal never reads the request
        return {"type": "http.disconnect"}

    await response(scope, no_body, send)
