"""A request's head (its line and headers) is capped: uvicorn's httptools protocol, bounded.

uvicorn sets no limit on the head with httptools, and the parser builds a header's value by adding
each piece that arrives to what it has: a client with no key sending one 100 MB header held the event
loop 13 s (50 MB: 2.8 s), its cost growing with the square of the size. Past ``MAX_HEAD_BYTES`` read
of a request that are not its body (line, headers, chunk framing, trailers), the connection is answered
431 and closed. The count is of whole reads as they come less the body's bytes; a read in which a
request ends is not counted. The same protocol times a slow client (api/slow_clients.py).
"""

from __future__ import annotations

import json
from typing import Any

from engramdb.api.slow_clients import ClientDeadlines

MAX_HEAD_BYTES = 64 * 1024  # nginx's default allows 4 x 8 KiB; Node and h11 16 KiB
_REFUSAL = json.dumps(
    {"code": "headers_too_large", "message": f"the request's line and headers are over {MAX_HEAD_BYTES} bytes"}
).encode()


def protocol() -> type[Any] | str:
    """The HTTP protocol class to serve with: the bounded one, or uvicorn's choice without httptools."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # no httptools on this platform: h11 caps a head itself (16 KiB)
        return "auto"

    class BoundedHead(ClientDeadlines, HttpToolsProtocol):
        # A request's bytes read, and of them its body's: the rest is its line, headers, chunk
        # framing and trailers, which the parser builds up piece by piece.
        _fed, _body, _ended, _too_large = 0, 0, False, False

        def data_received(self, data: bytes) -> None:
            self._ended = False
            super().data_received(data)
            if not self._ended:  # a read in which a request ended is not counted (the next one's start)
                self._fed += len(data)
                if self._fed - self._body > MAX_HEAD_BYTES:
                    self._refuse()

        def on_body(self, body: bytes) -> None:
            self._body += len(body)
            super().on_body(body)

        def on_headers_complete(self) -> None:
            size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
            if size > MAX_HEAD_BYTES:  # a head that came in one read: the parser stops, uvicorn calls send_400_response
                self._too_large = True
                raise ValueError("the request's head is over the cap")
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._fed, self._body, self._ended = 0, 0, True

        def send_400_response(self, msg: str) -> None:
            if self._too_large:
                self._refuse()
            else:
                super().send_400_response(msg)

        def _refuse(self) -> None:
            self.answer_and_close(b"431 Request Header Fields Too Large", _REFUSAL)

    return BoundedHead
