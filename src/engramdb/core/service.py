"""One short method per operation. Talks to the storage port and the embedder, never a driver."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from engramdb import __version__, clock
from engramdb.config import Settings
from engramdb.contract.bounds import QUERY_CAP, check_text
from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.contract.events import Episode, EpisodeWrite, Fact, FactWrite, Scope, ScopeFields
from engramdb.contract.format import FormattableMemory, format_context
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import Embedder
from engramdb.core.recall import Hit, recall
from engramdb.errors import NotFoundError
from engramdb.models.api import (
    ArmExplain,
    Explain,
    FactList,
    Health,
    MemoryView,
    RecalledMemory,
    RecallRequest,
    RecallResponse,
    WriteResponse,
)
from engramdb.storage.port import CandidateFilter, NewMemory, Source, Store, TenantStore


def episode_row(event: Episode, scope: Scope, recorded_at: str) -> NewMemory:
    """Return the storage row of an episode: the summary, then what it does not already say."""
    lines = [event.summary]
    if event.user_text and event.user_text.strip() != event.summary.strip():
        lines.append(f"User: {event.user_text}")
    if event.assistant_text:
        lines.append(f"Assistant: {event.assistant_text}")
    text = "\n".join(lines)
    return NewMemory(
        source="EPISODE",
        memory_id=event.event_id,
        scope=auth.scope_columns(scope),
        text=text,
        embed_text=text,
        trust_class=event.trust_class,
        origin="stated",
        status="active",
        confidence=1.0,
        observed_at=clock.normalize(event.observed_at),
        recorded_at=recorded_at,
        event_json=canonical_json(event.wire()),
        session_id=event.external_session_id,
    )


def fact_row(event: Fact, scope: Scope, recorded_at: str) -> NewMemory:
    """Return the storage row of a fact; its subject and kind are searchable words too."""
    valid_from = clock.normalize(event.valid_from)
    return NewMemory(
        source="MEMORY_FACT",
        memory_id=event.fact_id,
        scope=auth.scope_columns(scope),
        text=event.text,
        embed_text=event.text,
        trust_class=event.trust_class,
        origin="stated",
        # The server owns the lifecycle; a fact that arrives inactive is history, not current.
        status="active" if event.active else "archived",
        confidence=event.confidence,
        observed_at=valid_from,
        recorded_at=recorded_at,
        event_json=canonical_json(event.wire()),
        subject_key=event.subject_key,
        kind=event.kind,
        valid_from=valid_from,
        valid_until=clock.normalize(event.valid_until) if event.valid_until else None,
        supersedes_id=event.supersedes_fact_id,
    )


class MemoryService:
    """The operations of EngramDB, independent of the surface that calls them."""

    def __init__(self, store: Store, embedder: Embedder, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.written = threading.Event()  # wakes the embedding worker

    # -- writes ---------------------------------------------------------------------------

    def write_episode(self, caller: Caller, body: EpisodeWrite) -> WriteResponse:
        auth.require(caller, "memory.write")
        scope = auth.resolve_scope(caller, body.named_scope_fields())
        event = body.to_event(scope)
        row = episode_row(event, scope, clock.now_text())
        return self._write(caller, row, "episode.write")

    def write_fact(self, caller: Caller, body: FactWrite) -> WriteResponse:
        auth.require(caller, "memory.write")
        scope = auth.resolve_scope(caller, body.named_scope_fields())
        event = body.to_event(scope)
        row = fact_row(event, scope, clock.now_text())
        return self._write(caller, row, "fact.write")

    def write_episodes(self, caller: Caller, bodies: Sequence[EpisodeWrite]) -> list[WriteResponse]:
        """Write many episodes in one transaction (bulk import, evaluation ingest)."""
        auth.require(caller, "memory.write")
        now = clock.now_text()
        rows = []
        for body in bodies:
            scope = auth.resolve_scope(caller, body.named_scope_fields())
            rows.append(episode_row(body.to_event(scope), scope, now))
        return self._write_many(caller, rows, "episode.write")

    def _write(self, caller: Caller, row: NewMemory, action: str) -> WriteResponse:
        return self._write_many(caller, [row], action)[0]

    def _write_many(
        self, caller: Caller, rows: Sequence[NewMemory], action: str
    ) -> list[WriteResponse]:
        audits = [
            caller.audit(
                action,
                target_kind=row.source,
                target_id=row.memory_id,
                scope_key=row.scope.scope_key,
                after_digest=sha256_hex(row.event_json),
            )
            for row in rows
        ]
        outcomes = self._tenant(caller).insert_memories(rows, audits)
        self.written.set()
        return [
            WriteResponse(id=o.record.memory_id, created=o.created, memory=MemoryView.of(o.record))
            for o in outcomes
        ]

    # -- reads ----------------------------------------------------------------------------

    def get_memory(
        self, caller: Caller, source: Source, memory_id: str, named: ScopeFields
    ) -> MemoryView:
        auth.require(caller, "memory.read")
        scope = auth.resolve_scope(caller, named.named_scope_fields())
        record = self._tenant(caller).get_memory(auth.scope_key(scope), source, memory_id)
        if record is None:
            noun = "episode" if source == "EPISODE" else "fact"
            raise NotFoundError(f"no {noun} {memory_id} in this scope", id=memory_id)
        return MemoryView.of(record)

    def list_facts(
        self,
        caller: Caller,
        named: ScopeFields,
        *,
        subject_key: str | None = None,
        kind: str | None = None,
        limit: int = 100,
    ) -> FactList:
        auth.require(caller, "memory.read")
        scope = auth.resolve_scope(caller, named.named_scope_fields())
        records = self._tenant(caller).list_facts(
            auth.scope_key(scope), subject_key=subject_key, kind=kind, statuses=("active",),
            limit=limit,
        )  # fmt: skip
        return FactList(facts=[MemoryView.of(r) for r in records])

    def recall(self, caller: Caller, request: RecallRequest) -> RecallResponse:
        auth.require(caller, "memory.read")
        named = request.scope.named_scope_fields() if request.scope else {}
        scope = auth.resolve_scope(caller, named)
        query = check_text("query", request.query, QUERY_CAP)
        filt = CandidateFilter(
            statuses=("active",),
            exclude_session_id=request.exclude_session_id,
            sources=tuple(request.sources or ("EPISODE", "MEMORY_FACT")),
        )
        outcome = recall(
            self._tenant(caller),
            self.embedder,
            scope_key=auth.scope_key(scope),
            query=query,
            filt=filt,
            limit=request.limit,
            settings=self.settings.retrieval,
        )
        memories = [_recalled(hit, request.explain) for hit in outcome.hits]
        context = format_context(
            [FormattableMemory(m.source, m.text, m.score, m.trust_class, m.status) for m in memories]
        )
        return RecallResponse(memories=memories, context=context, timings=outcome.timings)

    def health(self) -> Health:
        return Health(
            status="ok",
            version=__version__,
            embedder=self.embedder.model_id,
            storage=self.settings.storage_url().split(":", 1)[0],
        )

    def _tenant(self, caller: Caller) -> TenantStore:
        return self.store.tenant(caller.tenant)


def _recalled(hit: Hit, explain: bool) -> RecalledMemory:
    record = hit.record
    details: dict[str, Any] = {}
    if explain:
        details["explain"] = Explain(
            arms={name: ArmExplain(**values) for name, values in hit.arms.items()},  # type: ignore[arg-type]
            features=hit.features,
            total=hit.score,
        )
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
        embedding_state=record.embed_state,
        **details,
    )
