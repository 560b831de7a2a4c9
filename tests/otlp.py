"""A real OTLP/HTTP trace receiver on loopback, for the tests: it decodes every
``ExportTraceServiceRequest`` it is sent with OTLP's own protobufs and keeps the spans.

Point a process at it with ``OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url``; the exporter posts to
``/v1/traces``. Nothing is faked: the exporter, its encoding and its HTTP are the real ones.
"""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto

KINDS = {v: k.removeprefix("SPAN_KIND_") for k, v in SpanProto.SpanKind.items()}


@dataclass(frozen=True)
class Span:
    """One received span, decoded: ids in hex, attributes as Python values."""

    trace_id: str
    span_id: str
    parent_id: str  # "" for a root
    name: str
    kind: str  # INTERNAL, SERVER, CLIENT, ...
    attributes: dict[str, Any]
    status: int  # 0 unset, 1 ok, 2 error
    status_message: str
    events: list[tuple[str, dict[str, Any]]]
    links: list[dict[str, Any]]
    service: str
    resource: dict[str, Any] = field(repr=False)
    scope: str = ""
    scope_attributes: dict[str, Any] = field(default_factory=dict, repr=False)


def value(any_value: AnyValue) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return attributes(any_value.kvlist_value.values)
    return getattr(any_value, kind) if kind else None


def attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: value(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


def decode(body: bytes) -> list[Span]:
    """Every span of one export request."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    Span(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex(),
                        name=span.name,
                        kind=KINDS[span.kind],
                        attributes=attributes(span.attributes),
                        status=span.status.code,
                        status_message=span.status.message,
                        events=[(e.name, attributes(e.attributes)) for e in span.events],
                        links=[{"trace_id": link.trace_id.hex(), **attributes(link.attributes)} for link in span.links],
                        service=str(resource.get("service.name", "")),
                        resource=resource,
                        scope=scope_spans.scope.name,
                        scope_attributes=attributes(scope_spans.scope.attributes),
                    )
                )
    return spans


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        encoding = self.headers.get("Content-Encoding", "")
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        if self.path != "/v1/traces" or "protobuf" not in self.headers.get("Content-Type", ""):
            self.send_error(404)
            return
        self.server.owner.add(decode(body))
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: Receiver


class Receiver:
    """The receiver, serving on 127.0.0.1 until ``close``."""

    def __init__(self) -> None:
        self._spans: list[Span] = []
        self._lock = threading.Lock()
        self._http = _Server(("127.0.0.1", 0), _Handler)
        self._http.owner = self
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()

    def add(self, spans: list[Span]) -> None:
        with self._lock:
            self._spans += spans

    @property
    def spans(self) -> list[Span]:
        with self._lock:
            return list(self._spans)

    def wait_for(self, found: Callable[[list[Span]], bool], timeout: float = 30.0) -> list[Span]:
        """Every span received, once ``found`` holds of them (an AssertionError after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while not found(spans := self.spans):
            assert time.monotonic() < deadline, f"not received in {timeout:g} s; got {sorted({s.name for s in spans})}"
            time.sleep(0.05)
        return spans

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()


def strings(span: Span) -> Iterator[tuple[str, str]]:
    """Every text a span carries, named by where it sits: its name, each attribute's key and value
    (in arrays too), its status message, its events' and links' names and attributes, its resource
    and its instrumentation scope."""
    yield "name", span.name
    yield "status", span.status_message
    yield "scope", span.scope
    for where, found in (
        ("attribute", span.attributes),
        ("resource", span.resource),
        ("scope attribute", span.scope_attributes),
        *((f"event {name}", attrs) for name, attrs in span.events),
        *(("link", link) for link in span.links),
    ):
        yield from _flat(where, found)
    for name, _ in span.events:
        yield "event", name


def _flat(where: str, found: Any) -> Iterator[tuple[str, str]]:
    if isinstance(found, dict):
        for key, item in found.items():
            yield f"{where} key", str(key)
            yield from _flat(f"{where} {key}", item)
    elif isinstance(found, list):
        for item in found:
            yield from _flat(where, item)
    elif found is not None:
        yield where, found.decode("latin-1") if isinstance(found, bytes) else str(found)
