"""The recall lane: places for recalls, handed out in turn across tenants, and within a tenant
across its keys.

A recall with a model in this process is CPU work from end to end, so a server runs as many at
once as it has cores and the rest wait (api/routes.py: ``in_recall_lane``). Waiting in one line,
first come first served, a key that sends thirty recalls at once made every other key's recall
wait behind all thirty. Here each key waits in a line of its own, a tenant's lines are its group,
and a freed place goes to the group whose turn it is, round the tenants, and in it to the line
whose turn it is, round the tenant's keys. So a tenant's recall waits for at most one recall of
each other tenant ahead of it, however many keys they mint; and of its tenant's turns, at most one
goes to each of the tenant's other keys before its own. Everything but ``/metrics`` (which reads
the two counts) runs on the server's one event loop, so nothing here needs a lock.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from engramdb.core.auth import Caller

T = TypeVar("T")


@dataclass(eq=False)
class _Waiter:
    granted: bool = False
    event: anyio.Event = field(default_factory=anyio.Event)


Line = tuple[str, str]  # (group, line in it): a tenant and one of its keys (``line_of``)


class FairLane:
    """``places`` recalls at once; past them each recall waits its turn in its line, and the lines
    take turns in their group, the groups in the lane (the module docstring)."""

    def __init__(self, places: int) -> None:
        self.places = places
        self.running = 0
        self.waiting = 0  # a count, not a sum over the lines: /metrics reads it from another thread
        # The next group first, and in each group its next line first.
        self._groups: OrderedDict[str, OrderedDict[str, deque[_Waiter]]] = OrderedDict()

    def try_acquire(self) -> bool:
        """Take a free place at once, if one is free and nobody waits for it."""
        if self.running < self.places and not self._groups:
            self.running += 1
            return True
        return False

    async def acquire(self, line: Line) -> None:
        """Wait for a place in ``line`` (a cancelled wait leaves it, or passes on a place it was
        granted as it was cancelled)."""
        if self.try_acquire():
            return
        waiter = _Waiter()
        group_name, line_name = line
        group = self._groups.setdefault(group_name, OrderedDict())
        waiters = group.setdefault(line_name, deque())
        waiters.append(waiter)
        self.waiting += 1
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.granted:
                self.release()
            else:
                waiters.remove(waiter)
                self.waiting -= 1
                if not waiters and group.get(line_name) is waiters:
                    del group[line_name]
                if not group and self._groups.get(group_name) is group:
                    del self._groups[group_name]
            raise

    def release(self) -> None:
        """Give a place back: to the first recall of the line whose turn it is in the group whose
        turn it is; that line then goes last in its group, and the group last in the lane."""
        if not self._groups:
            self.running -= 1
            return
        group_name, group = next(iter(self._groups.items()))
        line_name, waiters = next(iter(group.items()))
        waiter = waiters.popleft()
        self.waiting -= 1
        _next_turn(group, line_name, bool(waiters))
        _next_turn(self._groups, group_name, bool(group))
        waiter.granted = True  # the place passes straight to it: ``running`` stays
        waiter.event.set()


def _next_turn(turns: OrderedDict[str, Any], name: str, waits: bool) -> None:
    """``name`` was served: last in ``turns`` if it still ``waits``, else out of them."""
    if waits:
        turns.move_to_end(name)
    else:
        del turns[name]


def line_of(caller: Caller | None) -> Line:
    """The line a recall waits in: its key's, in its tenant's group (one for requests without a caller)."""
    return (caller.tenant, caller.key_name) if caller is not None else ("", "")


async def run_in(lane: FairLane, line: Line, call: Callable[[], T]) -> T:
    """Run ``call`` in a worker thread once its turn in ``line`` of ``lane`` comes."""
    await lane.acquire(line)
    try:
        return await run_on_place(call)
    finally:
        lane.release()


async def run_on_place(call: Callable[[], T]) -> T:
    """Run ``call`` in a worker thread of its own (a limiter of one, not the shared pool's): the
    caller already holds a place in the lane, and that place is the thread."""
    return await anyio.to_thread.run_sync(call, limiter=anyio.CapacityLimiter(1))
