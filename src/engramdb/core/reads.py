"""Reading memories: one by id, listings, a fact's history, tombstones, and recall."""

from __future__ import annotations

import base64
import binascii
import functools
import json
import time
from dataclasses import dataclass, replace
from typing import Any

from engramdb import clock, traces
from engramdb.contract.bounds import QUERY_CAP, check_text
from engramdb.contract.format import FormattableMemory, format_context
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.conflicts import newer_first
from engramdb.core.expansion import Expansion, LinkedRecord, expand
from engramdb.core.fact_history import page_of
from engramdb.core.policy import load_policy
from engramdb.core.ranking import Hit
from engramdb.core.recall import RecallOutcome, recall
from engramdb.core.relevance import Narrowing
from engramdb.core.sealed import Sealer
from engramdb.core.shared import Area
from engramdb.core.views import embedding_state, memory_view, scope_view, tombstone_view
from engramdb.errors import ConflictError, InvalidInputError, NotFoundError
from engramdb.models.base import ScopeQuery
from engramdb.models.lifecycle import FactHistory, FactHistoryQuery, TombstoneList, TombstoneQuery
from engramdb.models.memories import EpisodeList, EpisodeQuery, FactList, FactQuery, MemoryQuery, MemoryView
from engramdb.models.recall import (
    ArmExplain,
    Explain,
    Link,
    RecalledMemory,
    RecalledRecord,
    RecalledSession,
    RecallRequest,
    RecallResponse,
)
from engramdb.storage.port import BELIEVED_STATUSES, CandidateFilter, ListPosition, MemoryRecord, Source


class ReadOperations(Area):
    """Operations that read a scope's memories."""

    def get_episode(self, caller: Caller, event_id: str, query: MemoryQuery) -> MemoryView:
        return self.get_memory(caller, "EPISODE", event_id, query)

    def get_fact(self, caller: Caller, fact_id: str, query: MemoryQuery) -> MemoryView:
        return self.get_memory(caller, "MEMORY_FACT", fact_id, query)

    def get_memory(self, caller: Caller, source: Source, memory_id: str, named: ScopeQuery) -> MemoryView:
        """One memory of the caller's scope (404 when it is in no scope the caller may name)."""
        auth.require(caller, "memory.read")
        scope = self.shared.scope(caller, named.named_scope_fields())
        record = self.shared.tenant(caller).get_memory(auth.scope_key(scope), source, memory_id)
        if record is None:
            noun = "episode" if source == "EPISODE" else "fact"
            raise NotFoundError(f"no {noun} {memory_id} in this scope", id=memory_id)
        return memory_view(record, self.shared.embedder.model_id)

    def find_memory(self, caller: Caller, memory_id: str, query: MemoryQuery) -> MemoryView:
        """One memory by id in any scope the caller may name (and the query's fields narrow to)."""
        auth.require(caller, "memory.read")
        named = query.named_scope_fields()
        found = [
            record
            for record, scope in self.shared.tenant(caller).memories_by_id(memory_id)
            if auth.may_name(caller, scope) and all(scope_view(scope)[k] == v for k, v in named.items())
        ]
        if not found:
            raise NotFoundError(f"no memory {memory_id} in a scope this key may read", id=memory_id)
        if len(found) > 1:
            raise ConflictError(
                f"memory id {memory_id} is held by {len(found)} scopes; name the scope", field="scope", id=memory_id
            )
        return memory_view(found[0], self.shared.embedder.model_id)

    def list_facts(self, caller: Caller, query: FactQuery) -> FactList:
        """A scope's facts, newest recorded first, a page at a time (keyset paging by cursor)."""
        auth.require(caller, "memory.read")
        scope = self.shared.scope(caller, query.named_scope_fields())
        when = TimeTravel(query.as_of, query.valid_at, query.include_history)
        filt = lifecycle_filter(when, sources=("MEMORY_FACT",))
        if query.include_pending and filt.statuses is not None:
            filt = replace(filt, statuses=(*filt.statuses, "pending_review"))
        # The sealer only when a cursor is read or given: a tenant's first makes its salt (a write).
        below = None if query.cursor is None else _read_cursor("facts", query.cursor, self.shared.sealer(caller))
        rows = self.shared.tenant(caller).list_facts(
            auth.scope_key(scope),
            subject_key=query.subject_key,
            kind=query.kind,
            filt=filt,
            below=below,
            limit=query.limit + 1,
        )
        page, more = rows[: query.limit], len(rows) > query.limit
        cursor = _cursor("facts", page[-1].recorded_at, page[-1].rowid, self.shared.sealer(caller)) if more else None
        as_of = _canonical(query.as_of)
        return FactList(facts=[memory_view(as_believed(r, as_of)) for r in page], next_cursor=cursor)

    def list_episodes(self, caller: Caller, query: EpisodeQuery) -> EpisodeList:
        """A scope's episodes, newest first, a page at a time (keyset paging by cursor)."""
        auth.require(caller, "memory.read")
        scope = self.shared.scope(caller, query.named_scope_fields())
        tenant, key = self.shared.tenant(caller), auth.scope_key(scope)
        filters = {"session_id": query.session_id, "after": _canonical(query.after), "before": _canonical(query.before)}
        below = None if query.cursor is None else _read_cursor("episodes", query.cursor, self.shared.sealer(caller))
        rows = tenant.list_episodes(key, **filters, below=below, limit=query.limit + 1)
        page, more = rows[: query.limit], len(rows) > query.limit
        total = tenant.count_episodes(key, **filters) if query.count else None
        cursor = _cursor("episodes", page[-1].observed_at, page[-1].rowid, self.shared.sealer(caller)) if more else None
        return EpisodeList(episodes=[memory_view(r) for r in page], next_cursor=cursor, total=total)

    def fact_history(self, caller: Caller, fact_id: str, query: FactHistoryQuery) -> FactHistory:
        """A page of a fact's linked versions (oldest first, or newest first), with the values they
        retired (core/fact_history.py)."""
        auth.require(caller, "memory.read")
        key = auth.scope_key(self.shared.scope(caller, query.named_scope_fields()))
        tenant = self.shared.tenant(caller)
        versions = tenant.history_links(key, fact_id)  # ids and times: the page's rows are read alone
        if not versions:
            raise NotFoundError(f"no fact {fact_id} in this scope", id=fact_id)
        links, cursor = page_of(versions, query.cursor, query.limit, newest_first=query.newest_first)
        page = tenant.versions(key, links)
        if links and not page:  # erased between the two reads, every version of the page
            raise NotFoundError(f"no fact {fact_id} in this scope", id=fact_id)
        # The values the page's versions retired; the first page also has the slot's of no version
        # of this history (a retracted history before it). A supersession retires one value each.
        shown, ours = {v.memory_id for v in page}, {v.memory_id for v in versions}
        slots = sorted({(v.subject_key, v.kind) for v in versions if v.subject_key is not None and v.kind is not None})
        tombs = [
            t
            for subject, kind in slots
            for t in tenant.tombstones(key, subject_key=subject, kind=kind, include_lifted=True)
            if t.fact_id in shown or (query.cursor is None and t.fact_id not in ours)
        ]
        return FactHistory(
            versions=[memory_view(v) for v in page],
            tombstones=[tombstone_view(t) for t in tombs],
            total=len(versions),
            next_cursor=cursor,
        )

    def list_tombstones(self, caller: Caller, query: TombstoneQuery) -> TombstoneList:
        auth.require(caller, "memory.read")
        key = auth.scope_key(self.shared.scope(caller, query.named_scope_fields()))
        tombs = self.shared.tenant(caller).tombstones(
            key, subject_key=query.subject_key, kind=query.kind, include_lifted=query.include_lifted
        )
        return TombstoneList(tombstones=[tombstone_view(t) for t in tombs])

    def recall(self, caller: Caller, body: RecallRequest) -> RecallResponse:
        started = time.perf_counter()
        with self.shared.foreground.recalling():  # queued model jobs wait between their steps meanwhile
            answer = self._recall(caller, body)
        self.shared.usage.note_recall(caller.tenant, (time.perf_counter() - started) * 1000, self.shared.now())
        return answer

    def _recall(self, caller: Caller, body: RecallRequest) -> RecallResponse:
        auth.require(caller, "memory.read")
        scope = self.shared.scope(caller, body.scope.named_scope_fields() if body.scope else {})
        query = check_text("query", body.query, QUERY_CAP)
        filt = _recall_filter(body)
        with self.shared.tenant(caller).reading() as tenant:
            # Read on first use (after the query is embedded): on PostgreSQL the first read takes
            # the block's connection, which should not sit idle while the embedder works (the
            # lexical arm may take it while a local model runs: core/beside.py).
            policy = functools.cache(lambda: load_policy(tenant))
            weight = functools.cache(lambda trust, origin: policy().rule(trust, origin).weight)  # ~30 rows, few pairs
            outcome = recall(
                tenant,
                self.shared.queries,
                scope_key=auth.scope_key(scope),
                query=query,
                filt=filt,
                limit=body.limit,
                settings=self.shared.settings.retrieval,
                trust_weight=lambda r: weight(r.trust_class, r.origin),
                sessions=body.sessions,
                narrow=(narrow := narrowing(body)),
                anchor=clock.parse(body.as_of) if body.as_of else self.shared.now(),
            )
            top = self.shared.settings.retrieval.expand_top if body.expand is None else body.expand
            expanded = None
            if top > 0:
                started = time.perf_counter()
                with traces.span("engramdb.recall.expand", {"engramdb.recall.expand_top": top}) as expanding:
                    expanded = expand(
                        tenant,
                        auth.scope_key(scope),
                        outcome.hits,
                        filt,
                        top=top,
                        limit=body.limit,
                        weight=self.shared.settings.retrieval.expand_weight,
                        narrow=narrow,
                        words=outcome.words,
                    )
                    expanding.set_attribute("engramdb.recall.records", len(expanded.records))
                outcome = replace(
                    outcome,
                    hits=expanded.hits,
                    timings={**outcome.timings, "expandMs": (time.perf_counter() - started) * 1000},
                )
        retrieval = self.shared.settings.retrieval
        if retrieval.newer_first and outcome.words is not None:
            outcome = replace(outcome, hits=newer_first(outcome.hits, outcome.words.stems, body.limit))
        self.shared.usage.note(
            caller.tenant, [hit.record.rowid for hit in outcome.hits], clock.to_text(self.shared.now())
        )
        return _response(body, outcome, expanded, self.shared.embedder.model_id)


def _recall_filter(body: RecallRequest) -> CandidateFilter:
    """Which rows a recall may return: the lifecycle's (current by default), its sources and sessions."""
    filt = lifecycle_filter(
        TimeTravel(body.as_of, body.valid_at, body.include_history),
        sources=tuple(body.sources or ("EPISODE", "MEMORY_FACT")),
        exclude_session_id=body.exclude_session_id,
    )
    if body.include_pending and filt.statuses is not None:
        filt = replace(filt, statuses=(*filt.statuses, "pending_review"))
    if body.include_archived and filt.statuses is not None and "archived" not in filt.statuses:
        filt = replace(filt, statuses=(*filt.statuses, "archived"))
    return filt


def _response(body: RecallRequest, outcome: RecallOutcome, expanded: Expansion | None, model_id: str) -> RecallResponse:
    """The answer: each hit as the store believed it (``asOf``), the linked records, the context block."""
    as_of = _canonical(body.as_of)
    memories = [
        _recalled(replace(hit, record=as_believed(hit.record, as_of)), body.explain, model_id) for hit in outcome.hits
    ]
    records = [_linked_record(r) for r in expanded.records] if expanded else None
    place = {m.id: i for i, m in enumerate(memories, start=1)}
    context = format_context(
        [
            *(
                FormattableMemory(
                    m.source, m.text, m.score, m.trust_class, m.status, m.origin, place.get(m.replaced_by or "")
                )
                for m in memories
            ),
            *(record_context(r) for r in records or ()),
        ]
    )
    sessions = (
        [
            RecalledSession(session_id=s.session_id, score=s.score, memory_ids=[r.memory_id for r in s.records[:10]])
            for s in outcome.sessions
        ]
        if body.sessions
        else None
    )
    return RecallResponse(
        memories=memories, sessions=sessions, records=records, context=context, timings=outcome.timings
    )


def narrowing(body: RecallRequest) -> Narrowing:
    """The record filters and relevance floor a recall asks for."""
    return Narrowing(
        kinds=frozenset(body.kinds) if body.kinds else None,
        subject_key=body.subject_key,
        subject_prefix=body.subject_prefix,
        session_id=body.session_id,
        after=_canonical(body.after),
        before=_canonical(body.before),
        min_score=body.min_score,
    )


@dataclass(frozen=True)
class TimeTravel:
    """Which beliefs a read sees: now (default), as of a record time, at a valid time, history."""

    as_of: str | None = None
    valid_at: str | None = None
    include_history: bool = False


def as_believed(record: MemoryRecord, as_of: str | None) -> MemoryRecord:
    """The record as it stood at record time ``as_of`` (canonical text): one retired since was
    current then."""
    if as_of is None or record.retired_at is None or record.retired_at <= as_of:
        return record
    return replace(record, status="active", retired_at=None, superseded_by_id=None, status_reason=None, invalid_at=None)


def _canonical(moment: str | None) -> str | None:
    return clock.normalize(moment) if moment else None


def lifecycle_filter(
    when: TimeTravel,
    *,
    sources: tuple[Source, ...],
    exclude_session_id: str | None = None,
) -> CandidateFilter:
    """Return the candidate filter for a read: current beliefs unless told otherwise."""
    as_of, valid_at = _canonical(when.as_of), _canonical(when.valid_at)
    common: dict[str, Any] = {"sources": sources, "exclude_session_id": exclude_session_id}
    if when.include_history:
        return CandidateFilter(statuses=BELIEVED_STATUSES, believed_by=as_of, valid_at=valid_at, **common)
    if as_of is not None:  # believed then, whatever happened since
        return CandidateFilter(
            statuses=None, as_of=as_of, valid_at=valid_at, expires_after=None if valid_at else as_of, **common
        )
    if valid_at is not None:  # believed now, true then: an expired fact held in its window, a
        # superseded one until its successor's validFrom (the store's filter closes it there)
        return CandidateFilter(statuses=("active", "expired", "superseded"), valid_at=valid_at, **common)
    return CandidateFilter(statuses=("active",), expires_after=clock.now_text(), **common)


def _cursor(listing: str, at: str, rowid: int, sealer: Sealer) -> str:
    """An opaque cursor: the listing it pages, and where the page ended (the row's time, and the row
    sealed: core/sealed.py)."""
    return base64.urlsafe_b64encode(f"{listing}|{at}|{sealer.seal(rowid)}".encode()).decode()


def _read_cursor(listing: str, cursor: str, sealer: Sealer) -> ListPosition:
    try:
        named, at, sealed = base64.urlsafe_b64decode(cursor.encode()).decode().split("|")
        rowid = sealer.unseal(sealed)
        if named != listing or rowid is None or not clock.is_canonical(at):
            raise ValueError("another listing's cursor, no row sealed, or not a stored time")
        return ListPosition(at, rowid)
    except (ValueError, binascii.Error):
        raise InvalidInputError(
            "cursor is not one this server gave (pass nextCursor as it came)", field="cursor"
        ) from None


def _recalled(hit: Hit, explain: bool, model: str) -> RecalledMemory:
    record = hit.record
    details: dict[str, Any] = {}
    if explain:
        details["explain"] = Explain(
            arms={name: ArmExplain(**values) for name, values in hit.arms.items()},  # type: ignore[arg-type]
            features=hit.features,
            total=hit.score,
            replaced_by=hit.replaced_by,
        )
    if hit.via is not None:
        details["linked"] = Link(type=hit.via[0], memory_id=hit.via[1])
    return RecalledMemory(
        id=record.memory_id,
        source=record.source,
        text=record.text,
        score=hit.score,
        trust_class=record.trust_class,
        status=record.status,
        origin=record.origin,
        confidence=record.confidence,
        observed_at=record.observed_at,
        recorded_at=record.recorded_at,
        session_id=record.session_id,
        subject_key=record.subject_key,
        kind=record.kind,
        embedding_state=embedding_state(record, model),
        relevance=round(hit.relevance, 6),
        replaced_by=hit.replaced_by,
        **details,
    )


def _linked_record(linked: LinkedRecord) -> RecalledRecord:
    row = linked.row
    return RecalledRecord(
        id=row.record_id,
        label=row.label,
        properties=json.loads(row.properties_json),
        origin=row.origin,
        score=linked.score,
        updated_at=row.updated_at,
        linked=Link(type=linked.via, memory_id=linked.linked_from),
    )


def record_context(record: RecalledRecord) -> FormattableMemory:
    """A linked record in the context block: its label, then one property per line."""
    lines = [
        f"{name}: {json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value}"
        for name, value in record.properties.items()
    ]
    # Records carry no trust class: what the host stated is trusted, what a model derived is not.
    trust = "trusted" if record.origin == "stated" else "mixed"
    return FormattableMemory(record.label, "\n".join(lines), record.score, trust, "active", record.origin)
