"""What ``Memory`` asks of EngramDB: scopes per user, memories found by id alone, a fact's versions.

Mem0 scopes a memory by labels (``user_id``, ``agent_id``, ``run_id``); EngramDB by the five scope
fields. Here the user is the participant (its hash asked of the server once; a memory of no user
lives under ``NO_USER``), the agent and profile are the ``Memory``'s own (a host key fixes them),
and Mem0's ``agent_id`` and ``run_id`` are labels kept with each memory. A read that names no user
(``get_all(filters={"agent_id": ...})``) reads every participant's scope of this agent and profile.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from engramdb.errors import NotFoundError
from engramdb.integrations.mem0.shapes import Lineage
from engramdb.integrations.target import Scoped
from engramdb.models.memories import MemoryView
from engramdb.models.recall import RecalledMemory

NO_USER = "mem0 agent memory"  # the participant of memories with no user_id (Mem0 refuses spaces in ids)
SCOPE_FIELDS = ("agentId", "profileId", "privacyScope", "participantScopeHash", "sandboxEligible")
PAGE = 1000  # the largest page a listing gives (facts, episodes, a fact's history)


class Mem0Store:
    """EngramDB's operations in the shape ``Memory`` needs them."""

    def __init__(self, calls: Scoped) -> None:
        self.calls = calls

    def scope(self, user_id: str | None) -> dict[str, Any]:
        return self.calls.scope(user_id or NO_USER)

    def user_of(self, scope: dict[str, Any]) -> str | None:
        """The raw user id of a scope's participant, when this process named it (it is stored nowhere)."""
        wanted = scope.get("participantScopeHash")
        for user, hashed in self.calls.hashes.items():
            if hashed == wanted:
                return None if user == NO_USER else user
        return None

    def scopes(self, user_id: str | None) -> list[dict[str, Any]]:
        """The scopes a read names: the user's, or every participant's of this agent and profile."""
        if user_id is not None:
            return [self.scope(user_id)]
        scopes: list[dict[str, Any]] = []
        query: dict[str, Any] = {"limit": PAGE, "order": "key"}  # an order no write changes: each scope once
        while True:  # every scope of the tenant the key may name, a page at a time
            page = self.calls.call("list_scopes", query, {})
            scopes += [_fields(summary.wire()) for summary in page.scopes]
            if page.next_cursor is None:
                return [s for s in scopes if all(s[k] == v for k, v in self.calls.fixed.items())]
            query["cursor"] = page.next_cursor

    def locate(self, memory_id: str) -> MemoryView | None:
        """A memory by id alone, in this agent's and profile's scopes (None when there is none)."""
        try:
            view: MemoryView = self.calls.call("find_memory", {"memory_id": memory_id})
        except NotFoundError:
            return None
        return view

    def lineage(self, view: MemoryView) -> Lineage:
        """Every version of the memory ``view`` is one version of, oldest first."""
        if view.source != "MEMORY_FACT" or not (view.supersedes_fact_id or view.superseded_by_fact_id):
            return Lineage((view,))
        versions: list[MemoryView] = []
        query: dict[str, Any] = {"fact_id": view.id, "limit": PAGE}
        while True:  # Mem0's history is every version: a page at a time
            page = self.calls.call("fact_history", query, scope_of(view))
            versions += page.versions
            if page.next_cursor is None:
                return Lineage(tuple(versions))
            query["cursor"] = page.next_cursor

    def listed(self, operation: str, scope: dict[str, Any], **query: Any) -> Any:
        """A page of a scope's facts or episodes (``list_facts``, ``list_episodes``), as large as a listing gives."""
        return self.calls.call(operation, {"limit": PAGE, **query}, scope)

    def facts(self, scope: dict[str, Any]) -> Iterator[MemoryView]:
        """A scope's current facts and those awaiting review, newest first, every page."""
        query: dict[str, Any] = {"includePending": True}
        while True:
            page = self.listed("list_facts", scope, **query)
            yield from page.facts
            if page.next_cursor is None:
                return
            query["cursor"] = page.next_cursor

    def recall(
        self, scope: dict[str, Any], query: str, *, threshold: float | None, explain: bool
    ) -> list[RecalledMemory]:
        body = {
            "query": query,
            "limit": 50,
            "sources": ["MEMORY_FACT"],
            "includePending": True,
            "explain": explain,
            **({"minScore": threshold} if threshold else {}),
        }
        memories: list[RecalledMemory] = self.calls.call("recall", body, scope).memories
        return memories

    def get_fact(self, fact_id: str, scope: dict[str, Any]) -> MemoryView:
        view: MemoryView = self.calls.call("get_fact", {"fact_id": fact_id}, scope)
        return view


def scope_of(view: MemoryView) -> dict[str, Any]:
    """The five scope fields of a stored memory."""
    return {k: view.event[k] for k in SCOPE_FIELDS}


def _fields(wire: dict[str, Any]) -> dict[str, Any]:
    return {k: wire[k] for k in SCOPE_FIELDS}
