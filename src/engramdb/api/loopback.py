"""The real app served by uvicorn in a thread on 127.0.0.1 (an ephemeral port).

Used where a process needs the public HTTP interface of a server it runs itself: the
evaluation through REST (``engram eval --rest``) and the test suite.
"""

from __future__ import annotations

import socket
import threading
import time

import uvicorn
from fastapi import FastAPI

from engramdb.api.head_limit import protocol
from engramdb.api.keep_alive import KEEP_ALIVE_SECONDS


class LoopbackServer:
    """Serve ``app`` over loopback HTTP until :meth:`stop`."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets created with it, and
        # without it every response waits ~40 ms for delayed ACKs.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", timeout_keep_alive=KEEP_ALIVE_SECONDS, http=protocol())
        )
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]})

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()
