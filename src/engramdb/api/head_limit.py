"""A request's head (its line and headers) is capped in size and in time: uvicorn's httptools
protocol, bounded.

uvicorn sets no limit on the head with httptools, and the parser builds a header's value by adding
each piece that arrives to what it has: a client with no key sending one 100 MB header held the event
loop 13 s (50 MB: 2.8 s), its cost growing with the square of the size. Past ``MAX_HEAD_BYTES`` read
of a request that are not its body (line, headers, chunk framing, trailers), the connection is answered
431 and closed. The count is of whole reads as they come less the body's bytes; a read in which a
request ends is not counted.

Nor does uvicorn time a connection that sends no request, or a head that never ends: its idle timer
runs only after a response, and stops at the next byte. So a client with no key held a connection,
and one of the process's file descriptors, for as long as it liked (a byte now and then). A head
must now be whole within ``HEAD_SECONDS`` of the connection's opening, or of its first byte on a
kept-alive connection: past that, a connection that sent nothing is closed, and one in the middle
of a head is answered 408 and closed. An idle kept-alive connection is still uvicorn's to close
(api/keep_alive.py).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

MAX_HEAD_BYTES = 64 * 1024  # nginx's default allows 4 x 8 KiB; Node and h11 16 KiB
HEAD_SECONDS = 20.0  # nginx waits 60 s, Apache 20-40 s; a head is one packet for nearly every client
_REFUSAL = json.dumps(
    {"code": "headers_too_large", "message": f"the request's line and headers are over {MAX_HEAD_BYTES} bytes"}
).encode()


def _too_slow() -> bytes:
    return json.dumps(
        {
            "code": "request_timeout",
            "message": f"the request's line and headers did not arrive within {HEAD_SECONDS:g} s",
        }
    ).encode()


def protocol() -> type[Any] | str:
    """The HTTP protocol class to serve with: the bounded one, or uvicorn's choice without httptools."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # no httptools on this platform: h11 caps a head itself (16 KiB)
        return "auto"

    class BoundedHead(HttpToolsProtocol):
        # A request's bytes read, and of them its body's: the rest is its line, headers, chunk
        # framing and trailers, which the parser builds up piece by piece.
        _fed, _body, _ended, _too_large = 0, 0, False, False
        # The head's deadline, while one is awaited: from the connection's opening, or from the
        # first byte of a head on a kept-alive connection (uvicorn's idle timer stopped at it).
        _head_timer: asyncio.TimerHandle | None = None
        _in_head = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._await_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_arrived()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            self._ended = False
            super().data_received(data)
            if self._in_head:
                self._await_head()
            if not self._ended:  # a read in which a request ended is not counted (the next one's start)
                self._fed += len(data)
                if self._fed - self._body > MAX_HEAD_BYTES:
                    self._refuse()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head = True

        def on_body(self, body: bytes) -> None:
            self._body += len(body)
            super().on_body(body)

        def on_headers_complete(self) -> None:
            size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
            if size > MAX_HEAD_BYTES:  # a head that came in one read: the parser stops, uvicorn calls send_400_response
                self._too_large = True
                raise ValueError("the request's head is over the cap")
            self._head_arrived()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._fed, self._body, self._ended = 0, 0, True

        def send_400_response(self, msg: str) -> None:
            if self._too_large:
                self._refuse()
            else:
                super().send_400_response(msg)

        def _await_head(self) -> None:
            if self._head_timer is None:
                self._head_timer = self.loop.call_later(HEAD_SECONDS, self._head_late)

        def _head_arrived(self) -> None:
            self._in_head = False
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_timer = None
            if self._in_head:
                self._answer(b"408 Request Timeout", _too_slow())
            elif not self.transport.is_closing():
                self.transport.close()  # nothing sent: nobody to answer

        def _refuse(self) -> None:
            self._answer(b"431 Request Header Fields Too Large", _REFUSAL)

        def _answer(self, status: bytes, body: bytes) -> None:
            if self.transport.is_closing():
                return
            head = b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\n"
            head += b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
            self.transport.write(head + body)
            self.transport.close()

    return BoundedHead
