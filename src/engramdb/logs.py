"""Logging for the entry points: one line per record, with the request id when there is one.

Importing EngramDB never configures logging; ``serve``, ``mcp`` and the CLI call
``configure_logging``. The request id travels in a context variable from the HTTP boundary to
every record logged while the request is served.
"""

from __future__ import annotations

import logging
import sys
from contextvars import ContextVar
from typing import TextIO

request_id: ContextVar[str | None] = ContextVar("engram_request_id", default=None)


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` ("-" outside a request) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get() or "-"
        return True


def configure_logging(level: int = logging.INFO, stream: TextIO = sys.stderr) -> None:
    """Send records to ``stream`` as ``time level logger [request id] message``."""
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
