"""What a scope copy keeps beside its rows: answers worked out from them, until they change."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable


class Memo:
    """Answers worked out from a scope's rows (a search's rowids, say), each under a key, kept until
    the copy takes a changed row in (``ScopeCopy.apply`` clears it); the ``LIMIT`` most recent."""

    LIMIT = 8

    def __init__(self) -> None:
        self._held: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self.nbytes = 0

    def get(self, key: Hashable) -> object | None:
        held = self._held.get(key)
        if held is None:
            return None
        self._held.move_to_end(key)
        return held[0]

    def put(self, key: Hashable, answer: object, nbytes: int) -> None:
        """Keep ``answer`` (about ``nbytes`` in memory) under ``key``, dropping the oldest past the limit."""
        self.nbytes += nbytes - self._held.pop(key, (None, 0))[1]
        self._held[key] = (answer, nbytes)
        while len(self._held) > self.LIMIT:
            self.nbytes -= self._held.popitem(last=False)[1][1]

    def clear(self) -> None:
        self._held.clear()
        self.nbytes = 0
