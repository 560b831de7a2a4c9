"""``engramdb.Memory``: the API Mem0 users expect, over EngramDB (embedded, or a server).

    m = Memory()                                   # this process, data in ENGRAM_HOME or ./.engram
    m = Memory("http://127.0.0.1:8377", api_key=HOST_KEY, agent_id="support")   # a server
    m.add([{"role": "user", "content": "I'm vegetarian"}, {"role": "assistant", "content": "Noted."}],
          user_id="alice")
    m.search("what does alice eat?", user_id="alice", threshold=0.3)

What differs from Mem0, on purpose (docs/migrate-from-mem0.md): ``add`` stores each user/assistant
turn as an episode; ``infer=True`` also has the server's model extract facts and judge them
against the current ones (``POST /v1/memories``: derived facts, by default waiting for review);
with no model configured it raises ``ModelNotConfiguredError`` (501, saying how to configure one)
and stores nothing; ``update`` corrects a fact, so the new
value gets a new id and the old one stays in ``history``; ``delete`` retracts a fact (its value is
refused from then on and its history kept: a retraction, not an erasure); deleting an episode
erases it, and ``delete_all`` forgets the user (``POST /v1/forget``: every scope of the tenant,
admin keys only, as the embedded operator is).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engramdb.contract.canonical import canonical_json
from engramdb.errors import InvalidInputError, NotFoundError
from engramdb.integrations.target import Scoped, open_target
from engramdb.models.derive import AddResult
from engramdb.models.memories import MemoryView

Messages = str | Mapping[str, Any] | Sequence[Mapping[str, Any]]
_PROVENANCE = "mem0:"  # provenance of what Memory writes; the metadata follows as JSON
_LIMIT = 50  # recall's largest page


def turns(messages: Messages) -> list[tuple[str, str]]:
    """The (user, assistant) turns of a message list, in order; system and tool messages are left out."""
    if isinstance(messages, str):
        return [(messages, "")]
    items = [messages] if isinstance(messages, Mapping) else list(messages)
    pairs: list[tuple[str, str]] = []
    user: str | None = None
    for message in items:
        role, text = message.get("role"), _content(message.get("content"))
        if role == "user":
            if user is not None:
                pairs.append((user, ""))
            user = text
        elif role == "assistant":
            pairs.append((user or "", text))
            user = None
    if user is not None:
        pairs.append((user, ""))
    return [(u, a) for u, a in pairs if u.strip() or a.strip()]


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts: keep the text ones
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return ""


class Memory:
    """A Mem0-style memory keyed by user id; every call names its user (or the default ``user_id``)."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        home: str | Path | None = None,
        tenant: str = "default",
        agent_id: str | None = "mem0",
        profile_id: str | None = "default",
        user_id: str | None = None,
        privacy_scope: str = "private",
        sandbox_eligible: bool = False,
    ) -> None:
        """``url`` None: EngramDB in this process on ``home``. With a host key, ``agent_id`` and
        ``profile_id`` must be the key's (None: whatever the key fixes)."""
        self._calls = Scoped(
            open_target(url, api_key, home, tenant),
            agent_id=agent_id,
            profile_id=profile_id,
            privacy_scope=privacy_scope,
            sandbox_eligible=sandbox_eligible,
        )
        self.user_id = user_id

    def _scope(self, user_id: str | None, agent_id: str | None = None) -> dict[str, Any]:
        who = user_id or self.user_id
        if who is None:
            raise InvalidInputError("name the user: user_id=... (or Memory(user_id=...))", field="user_id")
        return self._calls.scope(who, agentId=agent_id)

    # -- writes -----------------------------------------------------------------------------

    def add(
        self,
        messages: Messages,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = False,
    ) -> dict[str, Any]:
        """Store each user/assistant turn of ``messages`` as one episode; ``{"results": [...]}``.
        ``infer``: the server's model also extracts facts (each result says what became of one)."""
        scope, add_id = self._scope(user_id, agent_id), uuid.uuid4().hex
        if infer:
            return _inferred(
                self._calls.call(
                    "add",
                    {
                        "messages": [
                            {"role": role, "content": text}
                            for user, assistant in turns(messages)
                            for role, text in (("user", user), ("assistant", assistant))
                            if text
                        ],
                        "infer": True,
                        "sessionId": run_id,
                    },
                    scope,
                ),
                user_id or self.user_id,
            )
        results = []
        for index, (user, assistant) in enumerate(turns(messages)):
            body = {
                "userText": user,
                "assistantText": assistant,
                "externalSessionId": run_id or "mem0",
                "turnIndex": index,
                "sourceEventId": f"mem0:{add_id}",
                "provenance": _provenance(metadata),
            }
            written = self._calls.call("write_episode", body, scope)
            results.append({**_item(written.memory, user_id or self.user_id), "event": "ADD"})
        return {"results": results}

    def remember(
        self,
        text: str,
        *,
        subject: str = "user",
        kind: str = "note",
        user_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """State a fact (what Mem0's extraction would have found): one of a subject's kind; a later
        fact of the same subject and kind replaces it, unless the kind holds several values."""
        body = {"text": text, "subjectKey": subject, "kind": kind, "provenance": _provenance(metadata)}
        written = self._calls.call("write_fact", body, self._scope(user_id))
        return {"results": [{**_item(written.memory, user_id or self.user_id), "event": "ADD"}]}

    def update(self, memory_id: str, data: str, *, user_id: str | None = None) -> dict[str, Any]:
        """Correct a fact to ``data``: a new version with a new id; the old value is kept in history."""
        scope = self._scope(user_id)
        if self._find(memory_id, scope).source == "EPISODE":
            raise InvalidInputError(
                "an episode records what was said and is never edited; update corrects facts (Memory.remember)",
                field="memory_id",
            )
        written = self._calls.call(
            "correct_fact", {"fact_id": memory_id, "text": data, "reason": "updated through engramdb.Memory"}, scope
        )
        return {"message": "Memory updated successfully!", "id": written.id, "previous_id": memory_id}

    def delete(self, memory_id: str, *, user_id: str | None = None) -> dict[str, Any]:
        """Retract a fact: no longer current or recalled, its value refused from now on, its history kept."""
        scope = self._scope(user_id)
        if self._find(memory_id, scope).source == "EPISODE":  # what was said: erased, not retracted
            self._calls.call("delete_episode", {"event_id": memory_id}, scope)
            return {"message": "Memory deleted (the episode is erased)", "id": memory_id}
        self._calls.call("retract_fact", {"fact_id": memory_id, "reason": "deleted through engramdb.Memory"}, scope)
        return {"message": "Memory retracted (its history is kept; it is not erased)", "id": memory_id}

    def delete_all(self, *, user_id: str | None = None) -> dict[str, Any]:
        """Forget the user: every memory of theirs in every scope of the tenant is erased (admin keys)."""
        participant = self._scope(user_id)["participantScopeHash"]
        gone = self._calls.call("forget_participant", {"participantScopeHash": participant}, {})
        return {"message": "Memories deleted (erased, not retracted)", "deleted": gone.wire()}

    # -- reads ------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        limit: int = 10,
        threshold: float | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The memories best matching ``query``; ``threshold`` drops those whose relevance is lower."""
        server, local = _split_filters(filters or {})
        body = {"query": query, "limit": min(max(limit, 1), _LIMIT), "minScore": threshold, **server}
        answer = self._calls.call(
            "recall", {k: v for k, v in body.items() if v is not None}, self._scope(user_id, agent_id)
        )
        results = [
            {
                "id": m.id,
                "memory": m.text,
                "score": m.relevance,
                "rank_score": m.score,
                "kind": "fact" if m.source == "MEMORY_FACT" else "episode",
                "created_at": m.recorded_at,
                "user_id": user_id or self.user_id,
            }
            for m in answer.memories
        ]
        return {
            "results": results
            if not local
            else [r for r in results if _meets(self.get(r["id"], user_id=user_id), local)]
        }

    def get_all(
        self, *, user_id: str | None = None, limit: int = 100, filters: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The user's current facts and their episodes, newest first (at most ``limit``)."""
        scope, (server, local) = self._scope(user_id), _split_filters(filters or {})
        fact_filters = {"subjectKey": server.get("subjectKey"), "kind": (server.get("kinds") or [None])[0]}
        facts = self._calls.call("list_facts", {"limit": limit, **{k: v for k, v in fact_filters.items() if v}}, scope)
        episode_filters = {
            "sessionId": server.get("sessionId"),
            "after": server.get("after"),
            "before": server.get("before"),
        }
        episodes = self._calls.call(
            "list_episodes", {"limit": limit, **{k: v for k, v in episode_filters.items() if v}}, scope
        )
        views = [
            *facts.facts,
            *(episodes.episodes if not fact_filters["kind"] and not fact_filters["subjectKey"] else []),
        ]
        items = [_item(v, user_id or self.user_id) for v in views]
        items.sort(key=lambda i: i["created_at"], reverse=True)
        return {"results": [i for i in items if _meets(i, local)][:limit]}

    def get(self, memory_id: str, *, user_id: str | None = None) -> dict[str, Any] | None:
        """One memory by id, or None."""
        try:
            return _item(self._find(memory_id, self._scope(user_id)), user_id or self.user_id)
        except NotFoundError:
            return None

    def history(self, memory_id: str, *, user_id: str | None = None) -> list[dict[str, Any]]:
        """What happened to a memory, oldest first: ADD, UPDATE (a correction), DELETE (a retraction)."""
        scope = self._scope(user_id)
        view = self._find(memory_id, scope)
        if view.source == "EPISODE":
            return [{**_item(view, user_id or self.user_id), "event": "ADD"}]
        versions = self._calls.call("fact_history", {"fact_id": memory_id}, scope).versions
        events: list[dict[str, Any]] = []
        for i, version in enumerate(versions):
            events.append(
                {
                    **_item(version, user_id or self.user_id),
                    "event": "ADD" if i == 0 else "UPDATE",
                    "previous_memory": versions[i - 1].event.get("text") if i else None,
                }
            )
            if version.status == "retracted":
                events.append(
                    {
                        **_item(version, user_id or self.user_id),
                        "event": "DELETE",
                        "created_at": version.retired_at,
                        "reason": version.status_reason,
                    }
                )
        return events

    def _find(self, memory_id: str, scope: dict[str, Any]) -> MemoryView:
        try:
            view: MemoryView = self._calls.call("get_fact", {"fact_id": memory_id}, scope)
        except NotFoundError:
            view = self._calls.call("get_episode", {"event_id": memory_id}, scope)
        return view

    def close(self) -> None:
        self._calls.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _provenance(metadata: Mapping[str, Any] | None) -> str:
    text = _PROVENANCE + (canonical_json(dict(metadata)) if metadata else "")
    if len(text) > 512:
        raise InvalidInputError("metadata is kept with the memory as JSON of at most 507 characters", field="metadata")
    return text


def _metadata(view: MemoryView) -> dict[str, Any]:
    provenance = str(view.event.get("provenance", ""))
    if provenance.startswith(_PROVENANCE) and len(provenance) > len(_PROVENANCE):
        loaded = json.loads(provenance[len(_PROVENANCE) :])
        return loaded if isinstance(loaded, dict) else {}
    return {}


# What became of a derived fact, in Mem0's words (parked: written, waiting for a reviewer).
_EVENTS = {"created": "ADD", "updated": "UPDATE", "parked": "ADD", "skipped": "NONE"}


def _inferred(result: AddResult, user_id: str | None) -> dict[str, Any]:
    """``add(infer=True)``'s answer: one result per candidate fact, and the episodes stored."""
    results = [
        {
            "id": item.fact_id,
            "memory": item.text,
            "event": _EVENTS[group],
            "status": item.status,
            "reason": item.reason,
            "user_id": user_id,
            "kind": "fact",
            "subject": item.subject_key,
            "fact_kind": item.kind,
        }
        for group in _EVENTS
        for item in getattr(result, group)
    ]
    return {"results": results, "episodes": result.episodes}


def _item(view: MemoryView, user_id: str | None) -> dict[str, Any]:
    event = view.event
    text = (
        event.get("text")
        if view.source == "MEMORY_FACT"
        else "\n".join(t for t in (event.get("userText"), event.get("assistantText")) if t)
    )
    return {
        "id": view.id,
        "memory": text,
        "metadata": _metadata(view),
        "created_at": view.recorded_at,
        "updated_at": view.retired_at,
        "user_id": user_id,
        "status": view.status,
        "kind": "fact" if view.source == "MEMORY_FACT" else "episode",
        "run_id": event.get("externalSessionId"),
        "subject": event.get("subjectKey"),
        "fact_kind": event.get("kind"),
    }


_SERVER_FILTERS = {
    "kind": "kinds",
    "kinds": "kinds",
    "subject": "subjectKey",
    "subject_key": "subjectKey",
    "run_id": "sessionId",
    "session_id": "sessionId",
    "after": "after",
    "before": "before",
}


def _split_filters(filters: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Filters recall applies (kind, subject, session, time) and metadata keys matched here."""
    server: dict[str, Any] = {}
    local: dict[str, Any] = {}
    for key, value in filters.items():
        if key in ("user_id", "agent_id"):
            continue  # the scope says who; named as arguments
        wire = _SERVER_FILTERS.get(key)
        if wire == "kinds":
            server[wire] = [value] if isinstance(value, str) else list(value)
        elif wire is not None:
            server[wire] = value
        else:
            local[key] = value
    return server, local


def _meets(item: Mapping[str, Any] | None, wanted: Mapping[str, Any]) -> bool:
    metadata = (item or {}).get("metadata") or {}
    return all(metadata.get(k) == v for k, v in wanted.items())
