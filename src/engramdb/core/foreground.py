"""Recall first: the background model work steps aside while a recall is being answered.

On a small machine the extraction worker (a process of its own, ``engram assist work``) and the
server share the CPUs, and every millisecond the worker computes while a recall runs is added to
that recall. The server counts the recalls it is answering in a small file in its data folder;
the worker reads the count between the steps of a job (never inside a transaction, so it holds no
lock while it waits) and waits, up to a bound, until it is zero. The bound keeps the queue moving
under a recall load that never stops; niceness and the bound together decide how much it gets.
One server per data folder: a second one's start would zero the first's count. Recalls a server
answers are counted (REST, MCP over HTTP); `engram recall` and stdio MCP, run in their own
processes, are not.
"""

from __future__ import annotations

import fcntl
import logging
import mmap
import os
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)
_LAYOUT = struct.Struct("<qd")  # recalls in flight, when that count last changed (CLOCK_MONOTONIC)
_STALE_SECONDS = 10.0  # a count not changed for this long was left by a server that died mid-recall
QUIET_SECONDS = 0.01  # this long after the last recall ended, the worker goes on
_POLL_SECONDS = 0.001


class Foreground:
    """The count of recalls in flight, shared through ``path`` by the server and its workers
    (in this process only when ``path`` is None). Times are CLOCK_MONOTONIC, one clock for every
    process of the machine."""

    def __init__(self, path: Path | None = None, *, quiet_seconds: float = QUIET_SECONDS) -> None:
        self._quiet = quiet_seconds
        self._lock = threading.Lock()
        self._polling = threading.Lock()  # the one thread that polls the count
        self._passed = float("-inf")  # when a step last went on at its bound, recalls still running
        self._local = 0  # this process's recalls in flight
        self._changed = float("-inf")  # when this process's count last changed
        self._fd: int | None = None
        self._map: mmap.mmap | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            if os.fstat(self._fd).st_size < _LAYOUT.size:  # written, not truncated: a full disk fails here
                os.pwrite(self._fd, bytes(_LAYOUT.size), 0)
            self._map = mmap.mmap(self._fd, _LAYOUT.size)

    @classmethod
    def shared(cls, path: Path) -> Foreground:
        """The count shared through ``path``; this process's alone (with a warning) when the file
        cannot be made: recall must not fail to start for want of it."""
        try:
            return cls(path)
        except OSError as error:
            log.warning("recalls in flight are not shared with the extraction workers (%s): %s", path, error)
            return cls()

    def reset(self) -> None:
        """Start from zero (the server, at start: a count left by a killed process means nothing)."""
        with self._lock:
            self._local = 0
            if self._map is not None:
                _LAYOUT.pack_into(self._map, 0, 0, time.monotonic())

    @contextmanager
    def recalling(self) -> Iterator[None]:
        """Count one recall in flight for the block's duration."""
        self._add(1)
        try:
            yield
        finally:
            self._add(-1)

    def _add(self, delta: int) -> None:
        with self._lock:
            self._local += delta
            self._changed = time.monotonic()
            if self._map is None or self._fd is None:
                return
            fcntl.flock(self._fd, fcntl.LOCK_EX)  # another server process may share the folder
            try:
                count, _ = _LAYOUT.unpack_from(self._map, 0)
                _LAYOUT.pack_into(self._map, 0, max(0, count + delta), time.monotonic())
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def here(self) -> bool:
        """Whether this process is answering a recall, or answered one less than a quiet spell ago."""
        return self._local > 0 or time.monotonic() - self._changed < self._quiet

    def busy(self) -> bool:
        """Whether a recall is being answered now (by any process sharing the file), or one ended
        less than a quiet spell ago (the next is likely on its way: a client asking in a loop
        leaves a millisecond between two)."""
        shared = self._map
        if shared is None:
            return self.here()
        try:
            count, changed = _LAYOUT.unpack_from(shared, 0)
        except (ValueError, TypeError):  # closed meanwhile (the process is stopping)
            return False
        since = time.monotonic() - changed
        if since < 0:  # written before this machine last started
            return False
        return bool(since < self._quiet or (count > 0 and since < _STALE_SECONDS))

    def wait_for_recalls(self, at_most: float) -> float:
        """Wait while a recall is in flight, ``at_most`` seconds; return the seconds waited.

        One thread of the process polls; the others wait for it on a lock, which costs no CPU
        (eight threads polling took a tenth of a core from the recalls they waited for). So the
        bound is the process's: while recalls never stop, one step of the process passes per
        ``at_most``, and a thread behind others may wait several times that.
        """
        if at_most <= 0 or not self.busy():
            return 0.0
        started = time.monotonic()
        with self._polling:
            deadline = max(started, self._passed) + at_most
            while self.busy() and time.monotonic() < deadline:
                time.sleep(_POLL_SECONDS)
            if self.busy():
                self._passed = time.monotonic()
        return time.monotonic() - started

    def close(self) -> None:
        shared, self._map = self._map, None
        if shared is not None:
            shared.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
