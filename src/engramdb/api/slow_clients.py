"""A client cannot hold a connection by sending slowly: uvicorn's protocol, with deadlines.

uvicorn times neither a connection that sends no request nor a head that never ends: its idle timer
runs only after a response, and stops at the next byte. So a client with no key held a connection,
and one of the process's file descriptors, for as long as it liked (a byte now and then). Nor does
it time a body left unread by an answer that came first (a refusal: no key, too large): the client
could go on sending it a byte at a time, each byte stopping the idle timer again.

A deadline of ``HEAD_SECONDS`` now runs while the server waits for the client and for nothing else:
from the connection's opening, from the first byte of a head on a kept-alive connection, and from
an answer sent while the request's body was still owed. A head not whole by then is answered 408
and the connection closed; a connection that sent nothing, or a body still owed, is closed. While
a response is under way nothing is timed (a pipelined request waits for it), and the deadline
starts again when it ends. An idle kept-alive connection is uvicorn's to close (api/keep_alive.py).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

HEAD_SECONDS = 20.0  # nginx waits 60 s, Apache 20-40 s; a head is one packet for nearly every client


class ClientDeadlines:
    """Mixed into uvicorn's httptools protocol (before it): the deadlines of the module docstring."""

    # Set by uvicorn's protocol: its event loop, the connection, the request under way and those queued.
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    cycle: Any
    pipeline: Any
    _deadline: asyncio.TimerHandle | None = None
    _in_head = False  # a request's head has begun and not ended
    _body_owed = False  # a request's head has ended and its body not

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._wait_for_client()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)  # type: ignore[misc]

    def on_message_begin(self) -> None:
        super().on_message_begin()  # type: ignore[misc]
        self._in_head = True
        self._wait_for_client()  # a head's first byte; behind a response, its end starts the wait

    def on_headers_complete(self) -> None:
        self._in_head, self._body_owed = False, True
        self._stop_waiting()
        super().on_headers_complete()  # type: ignore[misc]

    def on_message_complete(self) -> None:
        self._body_owed = False
        self._stop_waiting()
        super().on_message_complete()  # type: ignore[misc]

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if self._in_head or self._body_owed:
            self._wait_for_client()

    def answer_and_close(self, status: bytes, body: bytes) -> None:
        """Answer ``status`` with the JSON ``body`` outside any request's response, and close."""
        if self.transport.is_closing():
            return
        head = b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\n"
        head += b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
        self.transport.write(head + body)
        self.transport.close()

    def _responding(self) -> bool:
        return bool(self.pipeline) or (self.cycle is not None and not self.cycle.response_complete)

    def _wait_for_client(self) -> None:
        if self._deadline is None and not self._responding():
            self._deadline = self.loop.call_later(HEAD_SECONDS, self._client_late)

    def _stop_waiting(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _client_late(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or self._responding():
            return  # the response's end starts the deadline again
        if self._in_head:
            self.answer_and_close(b"408 Request Timeout", _too_slow())
        else:
            self.transport.close()  # nothing sent, or a body still owed after its answer


def _too_slow() -> bytes:
    message = f"the request's line and headers did not arrive within {HEAD_SECONDS:g} s"
    return json.dumps({"code": "request_timeout", "message": message}).encode()
