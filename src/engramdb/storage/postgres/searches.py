"""Where-queries hold few of the pool's connections at once (issue 30).

A where-query (a record search, a count, aggregates, a delete's search) may run until the
statement timeout; eight of them at once held all eight pooled connections, and another scope's
recall waited 30 s for one (503). Here they take at most ``total`` connections together and one
scope at most half of them (at least one), so the rest of the pool stays free for recall, writes
and the embedding job, and one scope's searches leave room for another's. A search that finds no
place waits at most ``wait`` seconds (a place frees within a statement timeout), then is refused:
503 ``overloaded`` with Retry-After.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from engramdb.errors import OverloadedError


class SearchPlaces:
    """The places where-queries take, in all and per scope."""

    def __init__(self, total: int, wait: float) -> None:
        self.total = max(1, total)
        self.per_scope = max(1, self.total // 2)
        self._wait = wait
        self._changed = threading.Condition()
        self._busy = 0
        self._by_scope: dict[tuple[str, str], int] = {}

    @contextmanager
    def held(self, tenant: str, scope_key: str) -> Iterator[None]:
        """Hold a place for one where-query of the scope while the block runs."""
        scope = (tenant, scope_key)
        with self._changed:
            if not self._changed.wait_for(lambda: self._is_free(scope), timeout=self._wait):
                raise self._refusal(scope)
            self._busy += 1
            self._by_scope[scope] = self._by_scope.get(scope, 0) + 1
        try:
            yield
        finally:
            with self._changed:
                self._busy -= 1
                self._by_scope[scope] -= 1
                if not self._by_scope[scope]:
                    del self._by_scope[scope]
                self._changed.notify_all()

    def _is_free(self, scope: tuple[str, str]) -> bool:
        return self._busy < self.total and self._by_scope.get(scope, 0) < self.per_scope

    def _refusal(self, scope: tuple[str, str]) -> OverloadedError:
        if self._by_scope.get(scope, 0) >= self.per_scope:
            message = f"this scope's record searches are using their {self.per_scope} database connection(s)"
        else:
            message = f"record searches are using their {self.total} database connections"
        return OverloadedError(f"{message}; retry shortly", retryAfterSeconds=1)
