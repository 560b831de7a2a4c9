"""Trace context from the agent to the server: ``traceparent`` on each request, in a CLIENT span.

Nothing here imports OpenTelemetry. A host that traces has loaded it (``opentelemetry.trace`` is
in ``sys.modules``); one that does not pays a dictionary lookup per request. When the host has set
a tracer provider, each request is a CLIENT span (``{method} {route template}``: the operation, the
server's address, the answer's status) whose context the request carries; when it has none but a
span is current (propagated from elsewhere), the request carries that span's context; otherwise
nothing is added. The path sent (ids) and its query string (text) are never recorded.
"""

from __future__ import annotations

import sys
from types import ModuleType, TracebackType
from typing import Any
from urllib.parse import urlsplit

from engramdb import __version__


class Sent:
    """One request's tracing: the headers to send and, when the host traces, its CLIENT span."""

    headers: dict[str, str] | None = None

    def __enter__(self) -> Sent:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        return None

    def answered(self, status: int) -> None:
        """Note the answer's HTTP status."""
        return None


QUIET = Sent()  # a host that does not trace: nothing to send, nothing to record


def sent(method: str, route: str, operation: str, base_url: str) -> Sent:
    """The tracing of one request (use as a context manager around sending it)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return QUIET
    return _traced(trace, method, route, operation, base_url)


def _traced(trace: ModuleType, method: str, route: str, operation: str, base_url: str) -> Sent:
    from opentelemetry import propagate

    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):  # the host set none
        if not trace.get_current_span().get_span_context().is_valid:
            return QUIET
        carried = Sent()
        carried.headers = {}
        propagate.inject(carried.headers)
        return carried
    url = urlsplit(base_url)
    attributes: dict[str, Any] = {
        "http.request.method": method,
        "url.template": route,
        "server.address": url.hostname or "",
        "server.port": url.port or (443 if url.scheme == "https" else 80),
        "engramdb.operation": operation,
    }
    tracer = trace.get_tracer("engramdb.sdk", __version__)
    span = tracer.start_span(f"{method} {route}", kind=trace.SpanKind.CLIENT, attributes=attributes)
    return _Spanned(trace, span)


class _Spanned(Sent):
    """A request in its own CLIENT span, current while it is sent (an httpx instrumentation's span
    would nest inside it)."""

    def __init__(self, trace: ModuleType, span: Any) -> None:
        from opentelemetry import context, propagate

        self._trace, self._span, self._context = trace, span, context
        self._within = trace.set_span_in_context(span)
        self.headers = {}
        propagate.inject(self.headers, context=self._within)
        self._token: Any = None

    def __enter__(self) -> Sent:
        self._token = self._context.attach(self._within)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._token is not None:
            self._context.detach(self._token)
        if error is not None:  # the request never got an answer: the error's class, never its message
            self._failed(getattr(error, "code", None) or type(error).__qualname__)
        self._span.end()

    def answered(self, status: int) -> None:
        self._span.set_attribute("http.response.status_code", status)
        if status >= 400:  # a client span's error: any 4xx or 5xx (HTTP conventions)
            self._failed(str(status))

    def _failed(self, code: str) -> None:
        self._span.set_attribute("error.type", code)
        self._span.set_status(self._trace.StatusCode.ERROR)
