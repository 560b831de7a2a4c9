"""``engramdb.Memory``: Mem0's ``Memory`` over EngramDB (embedded, or a server). The writes.

Mem0 code runs with its import changed: both call styles (0.x/1.x ``user_id=`` keywords, 2.x
``filters={...}`` and ``top_k=``), ``infer`` on and off, Mem0's result and history shapes. Each
memory is a lineage of facts (``shapes.Lineage``): ``infer=False`` stores each message as a stated
fact of its own subject (``mem0:<uuid>``, kind ``message``) with its role, so updating it corrects
only itself; ``infer=True`` has the server's model extract facts and judge them (``POST
/v1/memories``). What differs from Mem0 on purpose: docs/integrations.md (Mem0).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engramdb.errors import NotFoundError
from engramdb.integrations.mem0.filters import Mem0InputError, entity_id
from engramdb.integrations.mem0.reads import Reads
from engramdb.integrations.mem0.shapes import labels_of, provenance, text_of, valid_until
from engramdb.integrations.mem0.store import Mem0Store, scope_of
from engramdb.integrations.target import Scoped, open_target
from engramdb.models.derive import AddResult

log = logging.getLogger(__name__)
Messages = str | Mapping[str, Any] | Sequence[Mapping[str, Any]]
_ENGRAM_OPTIONS = ("url", "api_key", "home", "tenant", "agent_id", "profile_id", "privacy_scope", "sandbox_eligible")
_MEM0_CONFIG = ("vector_store", "llm", "embedder", "history_db_path", "version", "custom_instructions", "reranker")


class Memory(Reads):
    """Mem0's ``Memory``: add, search, get_all, get, update, delete, delete_all, history, reset."""

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
        ``profile_id`` are the key's (None: whatever the key fixes); Mem0's ``agent_id`` of a call is
        a label kept with each memory. ``user_id``: the user of calls that name none."""
        calls = Scoped(
            open_target(url, api_key, home, tenant),
            agent_id=agent_id,
            profile_id=profile_id,
            privacy_scope=privacy_scope,
            sandbox_eligible=sandbox_eligible,
        )
        super().__init__(Mem0Store(calls), user_id)

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """Mem0's ``Memory.from_config``: EngramDB's options under ``"engramdb"`` (url, api_key, home,
        tenant, agent_id, ...). Mem0's component settings are accepted and left to EngramDB's own."""
        options = dict(config_dict.get("engramdb") or {})
        unknown = set(config_dict) - {"engramdb", *_MEM0_CONFIG} | set(options) - set(_ENGRAM_OPTIONS)
        if unknown:
            raise Mem0InputError(f"unknown configuration: {', '.join(sorted(unknown))}", field="config")
        ignored = sorted(set(config_dict) & set(_MEM0_CONFIG))
        if ignored:
            log.info("Mem0 settings %s are EngramDB's own settings here (docs/configuration.md)", ", ".join(ignored))
        return cls(options.pop("url", None), options.pop("api_key", None), **options)

    def add(
        self,
        messages: Messages,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        expiration_date: Any = None,
        timestamp: Any = None,
    ) -> dict[str, Any]:
        """Store ``messages``: each one as a memory (``infer=False``), or the facts the server's model
        finds in them (``infer=True``, Mem0's default: needs a model, docs/assist.md)."""
        if timestamp is not None or memory_type is not None or prompt is not None:
            raise Mem0InputError("timestamp, memory_type and prompt are not supported", field="add")
        ids = {k: entity_id(v, k) for k, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id))}
        if not any(ids.values()) and self.user_id is None:
            raise Mem0InputError("At least one of 'user_id', 'agent_id', or 'run_id' must be provided.", field="ids")
        user = ids["user_id"] or (self.user_id if not (ids["agent_id"] or ids["run_id"]) else None)
        listed = _messages(messages)
        labels = {"agent_id": ids["agent_id"], "run_id": ids["run_id"], "metadata": _own(metadata)}
        if infer:
            return self._inferred(listed, user, ids["run_id"])
        scope, add_id = self.store.scope(user), uuid.uuid4().hex
        results = []
        for message in listed:
            role, content, name = message["role"], message["content"], message.get("name")
            body = {
                "text": content,
                "subjectKey": f"mem0:{uuid.uuid4()}",
                "kind": "message",
                "sourceEventId": f"mem0:{add_id}",
                "provenance": provenance({**labels, "role": role, "actor_id": name}),
                **({"validUntil": until} if (until := valid_until(expiration_date)) else {}),
            }
            written = self.store.calls.call("write_fact", body, scope)
            results.append({"id": written.id, "memory": content, "event": "ADD", "actor_id": name, "role": role})
        return {"results": results}

    def _inferred(self, messages: list[dict[str, Any]], user: str | None, run_id: str | None) -> dict[str, Any]:
        turns = [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] in ("user", "assistant")]
        if not turns:
            return {"results": []}
        answer: AddResult = self.store.calls.call(
            "add", {"messages": turns, "infer": True, "sessionId": run_id}, self.store.scope(user)
        )
        groups = (("ADD", answer.created), ("UPDATE", answer.updated), ("ADD", answer.parked))
        results = [
            {"id": item.fact_id, "memory": item.text, "event": event}
            | ({"status": item.status} if item.status != "active" else {})
            for event, group in groups
            for item in group
            if item.fact_id
        ]
        return {"results": results}

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        expiration_date: Any = None,
        data: str | None = None,
        *,
        user_id: str | None = None,
    ) -> dict[str, Any]:
        """Change a memory's text and/or metadata; its id stays, the old value is kept in ``history``."""
        del user_id  # the id alone finds the memory (kept for code written for engramdb.Memory before)
        text = text if text is not None else data
        if text is None and metadata is None and expiration_date is None:
            raise Mem0InputError("At least one of text, metadata, or expiration_date must be provided.", field="text")
        if expiration_date is not None:
            raise Mem0InputError(
                "expiration_date is set when a memory is added; a correction keeps no expiry", field="expiration_date"
            )
        lineage = self._lineage(memory_id)
        current = lineage.current
        if current.source == "EPISODE":
            raise Mem0InputError(
                "an episode records what was said and is never edited; update corrects facts", field="memory_id"
            )
        labels = labels_of(current)
        if metadata is not None:
            labels["metadata"] = {**(labels.get("metadata") or {}), **_own(metadata)}
        body = {
            "text": text if text is not None else text_of(current),
            "reason": "updated through engramdb.Memory",
            "provenance": provenance(labels),
        }
        if current.status == "pending_review":  # a model's fact not yet reviewed: the new text is the
            # review's answer (reviewer and admin keys, as the embedded operator; a host key gets 403)
            edit = {"fact_id": current.id, "text": body["text"], "reason": body["reason"]}
            self.store.calls.call("edit_and_approve", edit, scope_of(current))
        else:
            self.store.calls.call("correct_fact", {"fact_id": current.id, **body}, scope_of(current))
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str, *, user_id: str | None = None) -> dict[str, Any]:
        """Retract a memory: no longer current or found, its history kept (a retraction, not an erasure)."""
        del user_id
        current = self._lineage(memory_id).current
        scope = scope_of(current)
        if current.source == "EPISODE":  # written before issue 31: what was said is erased
            self.store.calls.call("delete_episode", {"event_id": current.id}, scope)
        elif current.status == "pending_review":  # never current: nothing to retract, so it goes
            self.store.calls.call("delete_fact", {"fact_id": current.id}, scope)
        else:
            reason = "deleted through engramdb.Memory"
            self.store.calls.call("retract_fact", {"fact_id": current.id, "reason": reason}, scope)
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, Any]:
        """Delete (retract) every memory of the user, agent and/or run named."""
        named = {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)) if v is not None}
        if not named:
            raise Mem0InputError(
                "At least one filter is required to delete all memories. Use reset() to delete every memory.",
                field="user_id",
            )
        # A listing holds a page of each scope's memories: list again until nothing is left (a page
        # of what the last round deleted again means nothing more can go: stop, not loop).
        seen: set[str] = set()
        while found := {m["id"] for m in self.get_all(filters=named, top_k=1_000_000)["results"]} - seen:
            seen |= found
            for memory_id in sorted(found):
                self.delete(memory_id)
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Erase every memory of this agent and profile, with its history (Mem0's reset)."""
        for scope in self.store.scopes(None):
            gone: set[str] = set()
            while facts := {f.id for f in self.store.listed("list_facts", scope, includeHistory=True).facts} - gone:
                gone |= facts
                for fact_id in sorted(facts):
                    try:
                        self.store.calls.call("delete_fact", {"fact_id": fact_id}, scope)
                    except NotFoundError:
                        continue  # gone with an earlier version of it
            while episodes := {e.id for e in self.store.listed("list_episodes", scope).episodes} - gone:
                gone |= episodes
                for event_id in sorted(episodes):
                    self.store.calls.call("delete_episode", {"event_id": event_id}, scope)

    def forget(self, user_id: str) -> dict[str, Any]:
        """Erase everything of the user in every scope of the tenant (``POST /v1/forget``; admin keys)."""
        participant = self.store.scope(user_id)["participantScopeHash"]
        gone = self.store.calls.call("forget_participant", {"participantScopeHash": participant}, {})
        return {"message": "Memories erased", "deleted": gone.wire()}

    def remember(
        self,
        text: str,
        *,
        subject: str = "user",
        kind: str = "note",
        user_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """State a fact in EngramDB's terms: one of a subject's kind; a later fact of the same subject
        and kind replaces it, unless the kind holds several values."""
        body = {
            "text": text,
            "subjectKey": subject,
            "kind": kind,
            "provenance": provenance({"metadata": _own(metadata)}),
        }
        written = self.store.calls.call("write_fact", body, self.store.scope(user_id or self.user_id))
        return {"results": [{"id": written.id, "memory": text, "event": "ADD"}]}

    def close(self) -> None:
        self.store.calls.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _messages(messages: Messages) -> list[dict[str, Any]]:
    """Mem0's messages: a string is one user message; system messages and malformed ones are left out."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    items = [messages] if isinstance(messages, Mapping) else list(messages)
    kept = []
    for message in items:
        if not isinstance(message, Mapping) or message.get("role") is None or message.get("content") is None:
            continue
        if message["role"] != "system":
            kept.append({**message, "content": _content(message["content"])})
    return kept


def _content(content: Any) -> str:
    if isinstance(content, list):  # OpenAI content parts: keep the text ones
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return str(content)


def _own(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """Metadata without the identity keys (the scope says who, as in Mem0)."""
    return {k: v for k, v in (metadata or {}).items() if k not in ("user_id", "agent_id", "run_id", "actor_id")}
