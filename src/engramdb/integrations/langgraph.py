"""``EngramStore``: LangGraph's long-term memory store (``BaseStore``) over EngramDB.

    store = EngramStore("http://127.0.0.1:8377", api_key=HOST_KEY, agent_id="coder", user_at=1)
    graph = builder.compile(store=store)        # nodes: get_store().put(("memories", user_id), key, value)

It behaves as LangGraph's own stores do (tests/integrations/langgraph/ runs it against
``InMemoryStore`` and LangGraph's own store tests); docs/integrations.md lists what differs and
why. An item is a fact (langgraph_items.py has the mapping): the participant is ``user_id``
(fixed) or the namespace's label at ``user_at`` (the server hashes it with the tenant's salt); the
whole namespace is the fact's subject and the key its kind, so a key holds one current value, a
``put`` supersedes it (``fact_history`` keeps every version) and a ``delete`` retracts it.
``search`` is ``search_facts``: the namespace prefix and the filter choose the items on the
server, then every one of them is ranked by its relevance to the query (newest first without
one), a page at a time; items put with ``index=False`` (sourceEventId ``langgraph:unindexed``) come
after the ranked ones, unscored. A
prefix or ``list_namespaces`` that names no participant (``user_at``) reads every participant's
scope the key may name. A batch reads first, then applies its puts (the last put of a key wins),
as LangGraph's stores do. ``abatch`` runs ``batch`` in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from engramdb import clock
from engramdb.integrations import langgraph_items as items
from engramdb.integrations.target import Scoped, open_target
from engramdb.models.fact_search import MAX_PAGE
from engramdb.models.memories import MemoryView


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

    def _user(self, namespace: tuple[str, ...]) -> str | None:
        """The participant a namespace names (None: it is too short to name one)."""
        if self.user_at is None:
            return self.user_id
        return namespace[self.user_at] if len(namespace) > self.user_at else None

    def _scope(self, namespace: tuple[str, ...]) -> dict[str, Any]:
        """The scope of a namespace, or every participant's when it names none."""
        return self._calls.scope(self._user(namespace))

    # -- the operations --------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the reads in order against the store as it was, then the puts (a put of None deletes;
        of two puts of one key, the last), as LangGraph's stores do."""
        results: list[Result] = []
        writes: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                writes[(op.namespace, op.key)] = op  # a key keeps its first place and takes its last value
                results.append(None)
            else:
                raise ValueError(f"Unknown operation type: {type(op)}")
        self._apply(list(writes.values()))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread (the calls themselves are blocking HTTP or local work)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def close(self) -> None:
        self._calls.close()

    def _current(self, namespace: tuple[str, ...], key: str, *, history: bool = False) -> MemoryView | None:
        """The item's current version; with ``history``, its newest version whatever its status."""
        query = {"subjectKey": items.subject(namespace), "kind": items.kind(key), "limit": 1}
        listed = self._calls.call("list_facts", {**query, "includeHistory": history}, self._scope(namespace))
        return listed.facts[0] if listed.facts else None

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        if self._user(namespace) is None:
            return None  # no item can be there: a put names its participant
        current = self._current(namespace, key)
        return items.item(current) if current is not None else None

    def _apply(self, writes: list[PutOp]) -> None:
        """Apply a batch's puts in order, each checked (and its text made) before any is written."""
        planned: list[tuple[PutOp, MemoryView | None, dict[str, Any] | None]] = []
        for op in writes:
            if self._user(op.namespace) is None:
                if op.value is not None:
                    raise InvalidNamespaceError(f"namespace {op.namespace!r} has no participant at {self.user_at}")
                continue  # a delete of what cannot exist
            newest = self._current(op.namespace, op.key, history=True)
            current = newest if newest is not None and newest.status == "active" else None
            planned.append((op, current, None if op.value is None else self._version(op, op.value, newest, current)))
        for op, current, body in planned:
            if body is not None:
                self._calls.call("write_fact", body, self._scope(op.namespace))
            elif current is not None:
                reason = {"fact_id": current.id, "reason": "deleted from the LangGraph store"}
                self._calls.call("retract_fact", reason, self._scope(op.namespace))

    def _version(
        self, op: PutOp, value: Mapping[str, Any], newest: MemoryView | None, current: MemoryView | None
    ) -> dict[str, Any]:
        """The write of a new version. Its validFrom follows every earlier version's, whatever this
        host's clock says, so the age guard never keeps it as history."""
        created = items.created_micros(current) if current is not None else None
        valid_from = clock.now_text()
        if newest is not None and newest.valid_from is not None and newest.valid_from >= valid_from:
            valid_from = clock.to_text(clock.parse(newest.valid_from) + timedelta(microseconds=1))
        return {
            "text": items.text(op.key, value),
            "subjectKey": items.subject(op.namespace),
            "kind": items.kind(op.key),
            "sourceEventId": items.INDEXED if op.index is not False else items.UNINDEXED,
            "provenance": items.provenance(created),
            "validFrom": valid_from,
        }

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.limit < 0 or op.offset < 0:
            raise ValueError("search takes a limit and an offset of 0 or more")
        try:
            where = items.conditions(op.filter)
        except items.Never:
            return []
        found: list[SearchItem] = []
        offset = op.offset
        while len(found) < op.limit:  # a thousand at a time
            body: dict[str, Any] = {"subjectPrefix": items.subject(op.namespace_prefix), "where": where}
            body |= {"offset": offset, "limit": min(MAX_PAGE, op.limit - len(found))}
            if op.query:  # items put with index=False follow the ranked ones, unscored
                body |= {"query": op.query, "unrankedSourceEventIds": [items.UNINDEXED]}
            page = self._calls.call("search_facts", {}, self._scope(op.namespace_prefix), body=body)
            found += [items.search_item(f.fact, f.score) for f in page.facts]
            offset += len(page.facts)
            if len(page.facts) < body["limit"]:
                break
        return found

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        fixed = items.fixed_prefix(conditions)
        subjects: list[str] = []
        after: str | None = None
        while True:  # every namespace under the fixed prefix, a thousand at a time
            query = {"subjectPrefix": items.subject(fixed), "limit": MAX_PAGE} | ({"after": after} if after else {})
            page = self._calls.call("list_subjects", query, self._scope(fixed))
            subjects += page.subjects
            if page.next_cursor is None:
                break
            after = page.next_cursor
        spaces = {ns for ns in map(items.namespace_of, subjects) if all(items.matches(c, ns) for c in conditions)}
        if op.max_depth is not None:
            spaces = {ns[: op.max_depth] for ns in spaces}
        return sorted(spaces)[op.offset : op.offset + op.limit]
