"""OpenTelemetry spans of the server and its workers, exported by OTLP/HTTP when the standard
variables ask for it; off, and free, otherwise.

``start`` is called once by an entry point (``engram serve``, ``engram mcp``, ``engram assist
work``): with ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) set it
builds a tracer provider of its own (never the global one: FastAPI's and the MCP library's own
instrumentation stay off, they would record paths and query strings) with a batch processor and
the OTLP/HTTP exporter, both configured by their standard ``OTEL_*`` variables. Until then every
``span`` is one shared object that does nothing, so the recall path pays a function call.

What a span may carry: ids, counts, sizes, durations, model names, codes. Never memory text, a
query, a record's properties, a prompt or a completion, a user id, nor an exception's message
(a failed span gets ``error.type``, the error's code, and an error status without description).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence, Sized
from contextlib import AbstractContextManager, contextmanager
from enum import Enum
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

log = logging.getLogger(__name__)

Sized_ = TypeVar("Sized_", bound=Sized)
Value = str | bool | int | float | Sequence[str] | Sequence[int] | Sequence[float]
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
INSTALL_HINT = "pip install 'engramdb[otel]'"


class Kind(Enum):
    """The span kinds EngramDB uses (OpenTelemetry's ``SpanKind`` by name)."""

    INTERNAL = "INTERNAL"
    SERVER = "SERVER"
    CLIENT = "CLIENT"


class Noted(Protocol):
    """What a ``span`` block holds: the span, to add attributes learnt on the way."""

    def set_attribute(self, key: str, value: Value) -> None: ...

    def set_attributes(self, attributes: Mapping[str, Value]) -> None: ...

    def update_name(self, name: str) -> None: ...


class _Off:
    """The span of a process that does not trace: one object, reused, doing nothing."""

    def __enter__(self) -> _Off:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def set_attribute(self, key: str, value: Value) -> None:
        return None

    def set_attributes(self, attributes: Mapping[str, Value]) -> None:
        return None

    def update_name(self, name: str) -> None:
        return None


OFF = _Off()
_tracer: Tracer | None = None
_provider: TracerProvider | None = None


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether the standard variables ask for traces: an OTLP endpoint, the SDK not disabled, and
    no ``OTEL_TRACES_EXPORTER`` other than ``otlp``."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() not in ("otlp", ""):
        return False
    return any(environ.get(name, "").strip() for name in _ENDPOINTS)


def start(version: str) -> bool:
    """Trace this process if its environment asks for it (``wanted``); return whether it does.

    OpenTelemetry's SDK reads the rest of its standard variables itself (exporter endpoint,
    headers, timeout, compression, sampler, batch sizes, resource). Asked for without the
    ``otel`` extra installed: a warning, and the process runs untraced.
    """
    global _tracer, _provider
    if _tracer is not None or not wanted(os.environ):
        return _tracer is not None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as missing:
        log.warning("traces are asked for (OTEL_EXPORTER_OTLP_ENDPOINT) but %s; %s", missing, INSTALL_HINT)
        return False
    resource = Resource.create({"service.version": version})
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "engramdb"}))
    provider = TracerProvider(resource=resource)  # the sampler: OTEL_TRACES_SAMPLER (parent-based by default)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    _provider, _tracer = provider, provider.get_tracer("engramdb", version)
    log.info("tracing: spans exported by OTLP/HTTP", extra={"serviceName": resource.attributes.get("service.name")})
    return True


def stop() -> None:
    """Export the spans still queued and stop tracing (the process is ending)."""
    global _tracer, _provider
    if _provider is not None:
        _provider.shutdown()
    _tracer, _provider = None, None


def on() -> bool:
    """Whether this process traces."""
    return _tracer is not None


def traced_arm(name: str, search: Callable[[], Sized_]) -> Sized_:
    """Run one recall arm (``dense`` or ``lexical``) as its own span, with the count it found."""
    with span(f"engramdb.recall.{name}") as current:
        found = search()
        current.set_attribute("engramdb.recall.count", len(found))
    return found


def span(
    name: str,
    attributes: Mapping[str, Value] | None = None,
    *,
    kind: Kind = Kind.INTERNAL,
    carrier: Mapping[str, str] | None = None,
) -> AbstractContextManager[Noted]:
    """A context manager: a span named ``name``, current inside the block, that yields it (a
    ``Noted``); the shared no-op ``OFF`` when this process does not trace.

    ``carrier`` holds the caller's propagation headers (``traceparent``): the span continues the
    caller's trace. An exception leaving the block marks the span failed with ``error.type``
    (the error's ``code``, else its class name), never its message.
    """
    if _tracer is None:
        return OFF
    return _live(_tracer, name, attributes, kind, carrier)


@contextmanager
def _live(
    tracer: Tracer, name: str, attributes: Mapping[str, Value] | None, kind: Kind, carrier: Mapping[str, str] | None
) -> Iterator[Noted]:
    from opentelemetry import propagate
    from opentelemetry.trace import SpanKind, StatusCode

    parent = propagate.extract(carrier) if carrier is not None else None
    with tracer.start_as_current_span(
        name,
        context=parent,
        kind=SpanKind[kind.value],
        attributes=attributes,
        record_exception=False,  # an event with the message and the stack: text, never exported
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as error:
            current.set_attribute("error.type", error_type(error))
            current.set_status(StatusCode.ERROR)
            raise


def error_type(error: BaseException) -> str:
    """The ``error.type`` of a failure: an EngramError's code, else the exception's class name."""
    code = getattr(error, "code", None)
    return code if isinstance(code, str) and code else type(error).__qualname__


def failed(current: Noted, code: str) -> None:
    """Mark ``current`` failed with ``error.type`` ``code`` (an answer that is an error, no exception)."""
    current.set_attribute("error.type", code)
    if isinstance(current, _Off):
        return
    from opentelemetry.trace import Span, StatusCode

    if isinstance(current, Span):
        current.set_status(StatusCode.ERROR)


def outgoing() -> dict[str, str]:
    """The propagation headers (``traceparent``) of the current span, for a request this process
    sends (the model endpoint); empty when it does not trace."""
    if _tracer is None:
        return {}
    from opentelemetry import propagate

    headers: dict[str, str] = {}
    propagate.inject(headers)
    return headers


def current_ids() -> tuple[str, str] | None:
    """The current span's (trace id, span id) in hex, or None outside a traced span."""
    if _tracer is None:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"
