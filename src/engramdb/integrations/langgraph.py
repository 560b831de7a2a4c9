"""``EngramStore``: LangGraph's long-term memory store (``BaseStore``) over EngramDB.

    store = EngramStore("http://127.0.0.1:8377", api_key=HOST_KEY, agent_id="coder", user_at=1)
    graph = builder.compile(store=store)        # nodes: get_store().put(("memories", user_id), key, value)

How items map (docs/integrations.md): an item is a fact. The participant is ``user_id`` (fixed) or
the namespace element at ``user_at`` (the server hashes it with the tenant's salt); the rest of
the namespace, each label percent-encoded and joined by ``/``, is the fact's subject
``ns:<path>``; the key is its kind (at most 64 characters); the text is the value's canonical JSON,
then a line with the version's times (at most 4,000 characters in all). ``put`` writes a new
version that supersedes the current one (history kept, ``fact_history``); ``delete`` retracts it.
Items are application state, not beliefs: each version's text carries its time, so putting back
an earlier value is a new version, never refused as a corrected-away value would be. ``search``
with a query is recall (hybrid, scope-filtered) over the namespace's facts, ordered by the score
it shows, the memory's relevance; filters on the value's fields are applied to what recall returns.
``abatch`` runs ``batch`` in a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import operator
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from engramdb import clock
from engramdb.contract.canonical import canonical_json
from engramdb.integrations.target import Scoped, open_target
from engramdb.models.memories import MemoryView

PREFIX = "ns:"
_LIST_LIMIT = 1000


class EngramStore(BaseStore):
    """LangGraph's ``BaseStore`` over EngramDB: one agent and profile, per participant."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        home: str | Path | None = None,
        tenant: str = "default",
        agent_id: str | None = "langgraph",
        profile_id: str | None = "default",
        user_id: str | None = None,
        user_at: int | None = None,
        privacy_scope: str = "private",
        sandbox_eligible: bool = False,
    ) -> None:
        if (user_id is None) == (user_at is None):
            raise ValueError("name the participant: user_id=... (one for the store) or user_at=N (the namespace's)")
        self._calls = Scoped(
            open_target(url, api_key, home, tenant),
            agent_id=agent_id,
            profile_id=profile_id,
            privacy_scope=privacy_scope,
            sandbox_eligible=sandbox_eligible,
        )
        self.user_id, self.user_at = user_id, user_at

    # -- the mapping -----------------------------------------------------------------------

    def _split(self, namespace: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        """(participant, the namespace without it)."""
        if self.user_at is None:
            assert self.user_id is not None
            return self.user_id, namespace
        if len(namespace) <= self.user_at:
            raise InvalidNamespaceError(f"namespace {namespace!r} has no participant at position {self.user_at}")
        return namespace[self.user_at], namespace[: self.user_at] + namespace[self.user_at + 1 :]

    def _join(self, user: str, rest: tuple[str, ...]) -> tuple[str, ...]:
        if self.user_at is None:
            return rest
        return (*rest[: self.user_at], user, *rest[self.user_at :])

    def _item(self, view: MemoryView, user: str) -> Item:
        subject, kind = str(view.event["subjectKey"]), str(view.event["kind"])
        value, created = _parse(str(view.event["text"]))
        namespace = self._join(user, tuple(unquote(p) for p in subject[len(PREFIX) :].split("/") if p))
        return Item(
            value=value,
            key=kind,
            namespace=namespace,
            created_at=_time(created or view.recorded_at),
            updated_at=_time(view.recorded_at),
        )

    def _search_item(self, view: MemoryView, user: str, score: float | None) -> SearchItem:
        item = self._item(view, user)
        return SearchItem(
            namespace=item.namespace,
            key=item.key,
            value=item.value,
            created_at=item.created_at,
            updated_at=item.updated_at,
            score=score,
        )

    def _current(self, namespace: tuple[str, ...], key: str) -> tuple[MemoryView | None, dict[str, Any], str]:
        user, rest = self._split(namespace)
        scope = self._calls.scope(user)
        listed = self._calls.call("list_facts", {"subjectKey": _subject(rest), "kind": key, "limit": 1}, scope)
        return (listed.facts[0] if listed.facts else None), scope, user

    # -- the operations --------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run each operation in order (a put of None deletes)."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, PutOp):
                if op.value is None:
                    self._delete(op.namespace, op.key)
                else:
                    self._put(op.namespace, op.key, op.value)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise ValueError(f"unknown operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread (the calls themselves are blocking HTTP or local work)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        current, _, user = self._current(namespace, key)
        return self._item(current, user) if current is not None else None

    def _put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> None:
        current, scope, _ = self._current(namespace, key)
        now = clock.now_text()
        created = _parse(str(current.event["text"]))[1] if current is not None else None
        text = canonical_json(dict(value)) + "\n" + canonical_json({"created": created or now, "version": now})
        _, rest = self._split(namespace)
        body = {
            "text": text,
            "subjectKey": _subject(rest),
            "kind": key,
            "sourceEventId": "langgraph:put",
            "provenance": "langgraph",
            "validFrom": now,
        }
        self._calls.call("write_fact", body, scope)

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        current, scope, _ = self._current(namespace, key)
        if current is not None:
            self._calls.call(
                "retract_fact", {"fact_id": current.id, "reason": "deleted from the LangGraph store"}, scope
            )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        user, rest = self._split(op.namespace_prefix)
        scope = self._calls.scope(user)
        wanted = op.limit + op.offset
        if op.query:
            body = {
                "query": op.query,
                "sources": ["MEMORY_FACT"],
                "limit": min(50, max(wanted * 2, 10)),
                "subjectPrefix": PREFIX + "/".join(quote(p, safe="") for p in rest),
            }
            hits = [(m.id, m.relevance) for m in self._calls.call("recall", body, scope).memories]
            views = {v.id: v for v in self._facts(scope)}
            found = [self._search_item(views[i], user, score) for i, score in hits if i in views]
            found.sort(key=lambda item: -(item.score or 0.0))  # best match first, by the score shown
        else:
            found = sorted(
                (self._search_item(v, user, None) for v in self._facts(scope)),
                key=lambda item: item.updated_at,
                reverse=True,
            )
        under = [i for i in found if i.namespace[: len(op.namespace_prefix)] == op.namespace_prefix]
        matching = [i for i in under if _matches(i.value, op.filter or {})]
        return matching[op.offset : op.offset + op.limit]

    def _facts(self, scope: dict[str, Any]) -> list[MemoryView]:
        listed: list[MemoryView] = self._calls.call("list_facts", {"limit": _LIST_LIMIT}, scope).facts
        return [v for v in listed if str(v.event.get("subjectKey", "")).startswith(PREFIX)]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefix = next((c.path for c in op.match_conditions or () if c.match_type == "prefix"), ())
        user, _ = self._split(tuple(prefix)) if self.user_at is not None else (self.user_id or "", ())
        if "*" == user:
            raise InvalidNamespaceError("list_namespaces needs the participant's element in its prefix")
        spaces = {self._item(v, user).namespace for v in self._facts(self._calls.scope(user))}
        found = sorted(
            {
                ns[: op.max_depth] if op.max_depth else ns
                for ns in spaces
                if all(_does_match(c, ns) for c in op.match_conditions or ())
            }
        )
        return found[op.offset : op.offset + op.limit]

    def close(self) -> None:
        self._calls.close()


def _subject(rest: tuple[str, ...]) -> str:
    if not rest:
        raise InvalidNamespaceError("the namespace needs a label beside the participant")
    return PREFIX + "/".join(quote(label, safe="") for label in rest)


def _parse(text: str) -> tuple[dict[str, Any], str | None]:
    """(the value, when the item was created) from a fact's text."""
    head, _, stamps = text.rpartition("\n")
    value = json.loads(head if head else text)
    created = json.loads(stamps).get("created") if head else None
    return (value if isinstance(value, dict) else {"value": value}), created


def _does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "suffix":
        namespace, path = namespace[len(namespace) - len(path) :], path
    return all(p == "*" or n == p for n, p in zip(namespace[: len(path)], path, strict=True))


def _matches(value: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """LangGraph's filter: exact values, nested dicts, and $eq $ne $gt $gte $lt $lte."""
    for key, expected in wanted.items():
        actual = value.get(key)
        if isinstance(expected, Mapping) and any(str(k).startswith("$") for k in expected):
            if not all(_compare(actual, op, operand) for op, operand in expected.items()):
                return False
        elif isinstance(expected, Mapping):
            if not isinstance(actual, Mapping) or not _matches(actual, expected):
                return False
        elif actual != expected:
            return False
    return True


_OPERATORS = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def _compare(actual: Any, op: str, operand: Any) -> bool:
    if op not in _OPERATORS:
        raise ValueError(f"unsupported filter operator {op}")
    try:
        return bool(_OPERATORS[op](actual, operand))
    except TypeError:  # an order between values of different types: no match, as in LangGraph's stores
        return False


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
