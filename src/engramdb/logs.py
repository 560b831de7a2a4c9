"""Logging for the entry points: one JSON object per line, with the request id when there is one.

Importing EngramDB never configures logging; ``serve``, ``mcp`` and the CLI call
``configure_logging``. The request id travels in a context variable from the HTTP boundary to
every record logged while the request is served, and is the ``requestId`` of the line, of the
``X-Request-Id`` header and of every error body. A line logged inside a traced span (traces.py)
also carries its ``traceId`` and ``spanId``.
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from types import ModuleType
from typing import Any, TextIO

request_id: ContextVar[str | None] = ContextVar("engram_request_id", default=None)
# Filled by the problem body of an error answer ({"code": ...}), read by the access log and metrics.
problem_note: ContextVar[dict[str, Any] | None] = ContextVar("engram_problem_note", default=None)

# What every LogRecord has; anything else on a record came as ``extra=`` and goes into the line.
_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "request_id", "taskName", "color_message"}


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` ("-" outside a request) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "requestId", "message", ...extra, "exception"}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "requestId": getattr(record, "request_id", None) or request_id.get() or None,
            "message": record.getMessage(),
        }
        if line["requestId"] in (None, "-"):
            del line["requestId"]
        line.update(_trace_ids(sys.modules.get("opentelemetry.trace")))
        line.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")})
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def _trace_ids(trace: ModuleType | None) -> dict[str, str]:
    """The current span's ids, if OpenTelemetry is loaded (it is, by FastAPI) and a span is current."""
    if trace is None:
        return {}
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"traceId": f"{context.trace_id:032x}", "spanId": f"{context.span_id:016x}"}


def configure_logging(level: int = logging.INFO, stream: TextIO = sys.stderr) -> None:
    """Send records to ``stream`` as JSON lines (see JsonFormatter)."""
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
