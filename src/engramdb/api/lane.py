"""The recall lane: places for recalls, handed out in turn across tenants.

A recall with a model in this process is CPU work from end to end, so a server runs as many at
once as it has cores and the rest wait (api/routes.py: ``in_recall_lane``). Waiting in one line,
first come first served, a key that sends thirty recalls at once made every other key's recall
wait behind all thirty. Here each tenant waits in a line of its own, and a freed place goes to the
line whose turn it is, round the tenants: another tenant's recall waits for at most one recall of
each tenant ahead of it. A line is a tenant's, not a key's, so a tenant that mints more keys gets
no bigger share. Everything but ``/metrics`` (which reads the two counts) runs on the server's one
event loop, so nothing here needs a lock.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio
import anyio.to_thread

from engramdb.core.auth import Caller

T = TypeVar("T")


@dataclass(eq=False)
class _Waiter:
    granted: bool = False
    event: anyio.Event = field(default_factory=anyio.Event)


class FairLane:
    """``places`` recalls at once; past them the recalls of each line (a tenant's: ``lane_key``) wait
    their turn in it."""

    def __init__(self, places: int) -> None:
        self.places = places
        self.running = 0
        self.waiting = 0  # a count, not a sum over the lines: /metrics reads it from another thread
        self._lines: OrderedDict[str, deque[_Waiter]] = OrderedDict()  # the next key's line first

    def try_acquire(self) -> bool:
        """Take a free place at once, if one is free and nobody waits for it."""
        if self.running < self.places and not self._lines:
            self.running += 1
            return True
        return False

    async def acquire(self, key: str) -> None:
        """Wait for a place in ``key``'s line (a cancelled wait leaves the line, or passes on a
        place it was granted as it was cancelled)."""
        if self.try_acquire():
            return
        waiter = _Waiter()
        line = self._lines.setdefault(key, deque())
        line.append(waiter)
        self.waiting += 1
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.granted:
                self.release()
            else:
                line.remove(waiter)
                self.waiting -= 1
                if not line and self._lines.get(key) is line:
                    del self._lines[key]
            raise

    def release(self) -> None:
        """Give a place back: to the first recall of the line whose turn it is, which then goes last."""
        if not self._lines:
            self.running -= 1
            return
        key, line = next(iter(self._lines.items()))
        waiter = line.popleft()
        self.waiting -= 1
        if line:
            self._lines.move_to_end(key)
        else:
            del self._lines[key]
        waiter.granted = True  # the place passes straight to it: ``running`` stays
        waiter.event.set()


def lane_key(caller: Caller | None) -> str:
    """Whose line a recall waits in: its tenant's (one line for requests without a caller)."""
    return caller.tenant if caller is not None else ""


async def run_in(lane: FairLane, key: str, call: Callable[[], T]) -> T:
    """Run ``call`` in a worker thread once ``key``'s turn in ``lane`` comes."""
    await lane.acquire(key)
    try:
        return await run_on_place(call)
    finally:
        lane.release()


async def run_on_place(call: Callable[[], T]) -> T:
    """Run ``call`` in a worker thread of its own (a limiter of one, not the shared pool's): the
    caller already holds a place in the lane, and that place is the thread."""
    return await anyio.to_thread.run_sync(call, limiter=anyio.CapacityLimiter(1))
