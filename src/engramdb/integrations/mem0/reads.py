"""``engramdb.Memory``'s reads: search, get_all, get, history, in Mem0's shapes.

Both of Mem0's call styles are taken: 2.x ``filters={"user_id": ...}`` and ``top_k=``, and the
0.x/1.x keywords ``user_id=``, ``agent_id=``, ``run_id=`` and ``limit=``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engramdb.errors import NotFoundError
from engramdb.integrations.mem0.filters import ENTITIES, Mem0InputError, entities, matches
from engramdb.integrations.mem0.shapes import Lineage, history, item
from engramdb.integrations.mem0.store import Mem0Store, scope_of

_OLD_LIMIT, _LIMIT = 100, 20  # the default number of results: Mem0 1.x's limit, 2.x's top_k


class MemoryNotFoundError(NotFoundError, ValueError):
    """No memory with that id in this agent's scopes (Mem0 raises ``ValueError``)."""


class Reads:
    """The reads of ``Memory``; ``store`` runs them, ``user_id`` is the user of calls naming none."""

    def __init__(self, store: Mem0Store, user_id: str | None) -> None:
        self.store = store
        self.user_id = user_id

    def search(
        self,
        query: str,
        *,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        threshold: float | None = 0.1,
        rerank: bool = False,
        explain: bool = False,
        limit: int | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """The memories best matching ``query``; ``score`` is the relevance (0 to 1) ``threshold`` compares."""
        wanted, old = self._filters(filters, user_id, agent_id, run_id)
        top = _top(top_k, limit, old)
        if not isinstance(query, str) or not query.strip():
            raise Mem0InputError("Invalid query: cannot be empty or whitespace-only.", field="query")
        if threshold is not None and not 0 <= threshold <= 1:
            raise Mem0InputError(f"Invalid threshold: {threshold}. Must be between 0 and 1.", field="threshold")
        del rerank  # recall's own fusion ranks; there is no second pass to switch on
        user = entities(wanted).get("user_id")
        found: list[dict[str, Any]] = []
        for scope in self.store.scopes(user):
            for hit in self.store.recall(scope, query.strip(), threshold=threshold, explain=explain):
                lineage = self.store.lineage(self.store.get_fact(hit.id, scope))
                shaped = item(lineage, user or self.store.user_of(scope), score=hit.relevance)
                if explain and hit.explain is not None:
                    shaped["score_details"] = hit.explain.wire()
                if matches(shaped, wanted):
                    found.append(shaped)
        found.sort(key=lambda r: -float(r["score"]))
        return {"results": found[:top]}

    def get_all(
        self,
        *,
        filters: Mapping[str, Any] | None = None,
        top_k: int | None = None,
        limit: int | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """The memories of the user, agent and/or run named (and meeting ``filters``), newest first."""
        wanted, old = self._filters(filters, user_id, agent_id, run_id)
        top = _top(top_k, limit, old)
        user = entities(wanted).get("user_id")
        listed = []
        for scope in self.store.scopes(user):
            for view in self.store.facts(scope):
                shaped = item(self.store.lineage(view), user or self.store.user_of(scope))
                if matches(shaped, wanted):
                    listed.append({k: v for k, v in shaped.items() if k != "score"})
        listed.sort(key=lambda r: str(r["created_at"]), reverse=True)
        return {"results": listed[:top]}

    def get(self, memory_id: str, *, user_id: str | None = None) -> dict[str, Any] | None:
        """One memory by id (any user's of this agent and profile), or None."""
        del user_id  # the id alone finds it
        view = self.store.locate(memory_id)
        lineage = None if view is None else self.store.lineage(view)
        if lineage is None or lineage.deleted:  # a deleted memory is gone (its history stays)
            return None
        return item(lineage, self.store.user_of(scope_of(lineage.current)))

    def history(self, memory_id: str, *, user_id: str | None = None) -> list[dict[str, Any]]:
        """Mem0's history of a memory, oldest first: ADD, UPDATE per change, DELETE (none: [])."""
        del user_id
        view = self.store.locate(memory_id)
        return [] if view is None else history(self.store.lineage(view))

    def _lineage(self, memory_id: str) -> Lineage:
        view = self.store.locate(memory_id)
        if view is None:
            raise MemoryNotFoundError(f"Memory with id {memory_id} not found", id=memory_id)
        return self.store.lineage(view)

    def _filters(
        self, filters: Mapping[str, Any] | None, user_id: str | None, agent_id: str | None, run_id: str | None
    ) -> tuple[dict[str, Any], bool]:
        """The filters of a call in either style, and whether it was the old (keyword) style."""
        keywords = {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)) if v}
        wanted = {**(filters or {}), **keywords}
        if not any(k in wanted for k in ENTITIES):
            if self.user_id is None:
                raise Mem0InputError(
                    "filters must contain at least one of: user_id, agent_id, run_id (e.g. filters={'user_id': 'u1'})",
                    field="filters",
                )
            wanted["user_id"] = self.user_id
        return wanted, bool(keywords) and not filters


def _top(top_k: int | None, limit: int | None, old: bool) -> int:
    top = top_k if top_k is not None else limit if limit is not None else (_OLD_LIMIT if old else _LIMIT)
    if not isinstance(top, int) or isinstance(top, bool) or top < 0:
        raise Mem0InputError(f"Invalid top_k: {top}. Must be a non-negative integer.", field="top_k")
    return top
