"""One short method per operation. Talks to the storage port and the embedder, never a driver."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from engramdb import __version__, clock
from engramdb.config import Settings
from engramdb.contract.bounds import QUERY_CAP, REASON_CAP, check_text
from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.contract.events import Episode, EpisodeWrite, Fact, FactWrite, Scope, ScopeFields
from engramdb.contract.format import FormattableMemory, format_context
from engramdb.core import auth, facts
from engramdb.core.auth import Caller
from engramdb.core.embedding import Embedder
from engramdb.core.policy import TenantPolicy, load_policy, save_policy
from engramdb.core.recall import Hit, recall
from engramdb.errors import (
    AuthorizationError,
    ConflictError,
    EngramError,
    InvalidInputError,
    NotFoundError,
)
from engramdb.models.api import (
    ArmExplain,
    AuditPage,
    AuditView,
    CorrectRequest,
    EditAndApprove,
    Explain,
    FactHistory,
    FactList,
    Health,
    LiftRequest,
    MemoryView,
    RecalledMemory,
    RecalledSession,
    RecallRequest,
    RecallResponse,
    RejectDecision,
    RetractRequest,
    ReviewDecision,
    ReviewItem,
    ReviewQueue,
    TombstoneList,
    TombstoneView,
    WriteResponse,
)
from engramdb.models.problems import validation_problem
from engramdb.storage.port import (
    BELIEVED_STATUSES,
    CandidateFilter,
    MemoryRecord,
    NewMemory,
    ScopeColumns,
    Source,
    Store,
    TenantStore,
    Tombstone,
)


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
        active_from=recorded_at,
    )


def fact_row(event: Fact, scope: Scope, recorded_at: str, origin: str = "stated") -> NewMemory:
    """Return the storage row of a fact; its subject and kind are searchable words too."""
    valid_from = clock.normalize(event.valid_from)
    return NewMemory(
        source="MEMORY_FACT",
        memory_id=event.fact_id,
        scope=auth.scope_columns(scope),
        text=event.text,
        embed_text=event.text,
        trust_class=event.trust_class,
        origin=origin,
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
        active_from=recorded_at if event.active else None,
    )


MAX_BATCH = 100


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
        return self._insert_episodes(caller, [row])[0]

    def write_fact(self, caller: Caller, body: FactWrite, *, origin: str = "stated") -> WriteResponse:
        """Store a fact; ``origin`` is ``derived`` when a model wrote it (trust policy applies)."""
        auth.require(caller, "memory.write")
        scope = auth.resolve_scope(caller, body.named_scope_fields())
        row = fact_row(body.to_event(scope), scope, clock.now_text(), origin)
        return self._assert(caller, row)

    def write_episodes(self, caller: Caller, bodies: Sequence[EpisodeWrite]) -> list[WriteResponse]:
        """Write many episodes in one transaction (bulk import, evaluation ingest)."""
        auth.require(caller, "memory.write")
        now = clock.now_text()
        rows = []
        for body in bodies:
            scope = auth.resolve_scope(caller, body.named_scope_fields())
            rows.append(episode_row(body.to_event(scope), scope, now))
        return self._insert_episodes(caller, rows)

    def write_episode_batch(self, caller: Caller, items: Sequence[Any]) -> list[dict[str, Any]]:
        """Write up to 100 episodes in one transaction; each item answers for itself.

        Items are validated one by one first, so a bad item is refused alone (its problem JSON
        in its slot) and the good ones are still written, together.
        """
        auth.require(caller, "memory.write")
        if len(items) > MAX_BATCH:
            raise InvalidInputError(f"at most {MAX_BATCH} episodes per batch", field="episodes")
        answers: list[dict[str, Any]] = [{} for _ in items]
        rows, slots, now = [], [], clock.now_text()
        for i, item in enumerate(items):
            try:
                body = EpisodeWrite.model_validate(item)
                scope = auth.resolve_scope(caller, body.named_scope_fields())
                rows.append(episode_row(body.to_event(scope), scope, now))
                slots.append(i)
            except ValidationError as error:
                answers[i] = {"status": 422, **validation_problem(list(error.errors()))}
            except EngramError as error:
                answers[i] = {"status": error.http_status, **error.to_dict()}
        for slot, written in zip(slots, self._insert_episodes(caller, rows) if rows else [], strict=True):
            answers[slot] = {"status": 201 if written.created else 200, **written.wire()}
        return answers

    def correct_fact(self, caller: Caller, fact_id: str, body: CorrectRequest) -> WriteResponse:
        """Replace an active fact's value with a new fact (the old one is tombstoned)."""
        auth.require(caller, "memory.write")
        scope = auth.resolve_scope(caller, body.scope.named_scope_fields() if body.scope else {})
        key = auth.scope_key(scope)
        current = self._tenant(caller).get_memory(key, "MEMORY_FACT", fact_id)
        if current is None:
            raise NotFoundError(f"no fact {fact_id} in this scope", id=fact_id)
        if body.valid_from and current.valid_from and clock.parse(body.valid_from) < clock.parse(current.valid_from):
            # It would be older than the fact it corrects, so the age guard would keep it as history.
            raise InvalidInputError(f"a correction cannot start before the fact it corrects "
                                    f"(validFrom {current.valid_from})", field="validFrom")  # fmt: skip
        event = json.loads(current.event_json)
        for stale in ("factId", "supersedesFactId", "validUntil", *auth.SCOPE_FIELDS):
            event.pop(stale, None)
        event.update(text=body.text, active=True, supersedesFactId=fact_id,
                     sourceEventId=body.source_event_id or f"correction:{fact_id}",
                     validFrom=body.valid_from or current.valid_from or clock.now_text(),
                     confidence=body.confidence if body.confidence is not None else current.confidence)  # fmt: skip
        row = fact_row(FactWrite.model_validate(event).to_event(scope), scope, clock.now_text(),
                       current.origin)  # fmt: skip
        return self._assert(caller, row, target_id=fact_id, reason=body.reason)

    def retract_fact(self, caller: Caller, fact_id: str, body: RetractRequest) -> MemoryView:
        """Retract an active fact: no longer current, its value tombstoned."""
        auth.require(caller, "memory.write")
        scope = auth.resolve_scope(caller, body.scope.named_scope_fields() if body.scope else {})
        with self._tenant(caller).transaction() as tx:
            record = facts.retract(tx, auth.scope_key(scope), fact_id, caller,
                                   reason=body.reason, at=clock.now_text())  # fmt: skip
        return MemoryView.of(record)

    def lift_tombstone(self, caller: Caller, tombstone_id: str, body: LiftRequest) -> TombstoneView:
        auth.require(caller, "tombstone.lift")
        with self._tenant(caller).transaction() as tx:
            tomb = facts.lift(tx, tombstone_id, caller, reason=body.reason, at=clock.now_text())
        return _tombstone_view(tomb)

    # -- review ---------------------------------------------------------------------------

    def review_queue(
        self, caller: Caller, *, kind: str | None = None, subject_key: str | None = None,
        older_than_seconds: float | None = None, limit: int = 100,
    ) -> ReviewQueue:  # fmt: skip
        """Facts awaiting review anywhere in the tenant, oldest first."""
        auth.require(caller, "review.read")
        before = clock.later(-older_than_seconds) if older_than_seconds else None
        pending = self._tenant(caller).review_queue(kind=kind, subject_key=subject_key,
                                                    recorded_before=before, limit=limit)  # fmt: skip
        return ReviewQueue(items=[ReviewItem(fact=MemoryView.of(r), scope=_scope_dict(s)) for r, s in pending])

    def _require_reviewer(self, caller: Caller, fact_id: str) -> None:
        """Refuse non-reviewers, and audit the refusal: an agent approving itself is an event."""
        try:
            auth.require(caller, "review.decide")
        except AuthorizationError:
            with self._tenant(caller).transaction() as tx:
                tx.audit(caller.audit("review.denied", target_kind="MEMORY_FACT", target_id=fact_id,
                                      reason=f"{caller.role} keys may not decide reviews"))  # fmt: skip
            raise

    def approve(self, caller: Caller, fact_id: str, body: ReviewDecision) -> WriteResponse:
        self._require_reviewer(caller, fact_id)
        tenant = self._tenant(caller)
        policy = load_policy(tenant)
        with tenant.transaction() as tx:
            pending = self._pending(caller, tx, fact_id, body.scope)
            result = facts.approve(tx, pending, caller, policy, at=clock.now_text(), reason=body.reason)
        self.written.set()
        return _write_response(result)

    def reject(self, caller: Caller, fact_id: str, body: RejectDecision) -> MemoryView:
        self._require_reviewer(caller, fact_id)
        reason = check_text("reason", body.reason, REASON_CAP)
        with self._tenant(caller).transaction() as tx:
            pending = self._pending(caller, tx, fact_id, body.scope)
            record = facts.reject(tx, pending, caller, reason=reason, at=clock.now_text())
        return MemoryView.of(record)

    def edit_and_approve(self, caller: Caller, fact_id: str, body: EditAndApprove) -> WriteResponse:
        """Replace a pending fact's text with the reviewer's, then approve the edited fact."""
        self._require_reviewer(caller, fact_id)
        tenant = self._tenant(caller)
        policy = load_policy(tenant)
        now = clock.now_text()
        with tenant.transaction() as tx:
            pending = self._pending(caller, tx, fact_id, body.scope)
            event = json.loads(pending.event_json)
            scope = Scope.model_validate({k: event.pop(k) for k in auth.SCOPE_FIELDS})
            event.pop("factId")
            event.update(text=body.text, sourceEventId=f"review-edit:{fact_id}")
            row = replace(fact_row(FactWrite.model_validate(event).to_event(scope), scope, now,
                                   pending.origin), status="pending_review", active_from=None)  # fmt: skip
            edited = tx.insert_memory(row) or tx.get_memory(pending.scope_key, "MEMORY_FACT", row.memory_id)
            assert edited is not None
            why = f"edited in review: {body.reason}" if body.reason else "edited in review"
            # The draft holds nowhere: the reviewer's text replaces it over the same valid time.
            facts.retire(tx, pending, caller, status="superseded", at=now, reason=why,
                         successor=row.memory_id, invalid_at=row.valid_from, tombstone=False)  # fmt: skip
            result = facts.approve(tx, edited, caller, policy, at=now, reason=why,
                                   supersedes=fact_id)  # fmt: skip
        self.written.set()
        return _write_response(result)

    def _pending(self, caller: Caller, tx: Any, fact_id: str, named: ScopeFields | None) -> MemoryRecord:
        """Find a fact awaiting review by id; the scope disambiguates an id found twice."""
        if named is not None and named.named_scope_fields():
            key = auth.scope_key(auth.resolve_scope(caller, named.named_scope_fields()))
            found = tx.get_memory(key, "MEMORY_FACT", fact_id)
            candidates = [found] if found else []
        else:
            candidates = self._tenant(caller).facts_by_id(fact_id, ("pending_review",))
            candidates = [tx.get_memory(c.scope_key, "MEMORY_FACT", fact_id) for c in candidates]
        if not candidates:
            raise NotFoundError(f"no fact {fact_id} awaiting review", id=fact_id)
        if len(candidates) > 1:
            raise ConflictError(f"fact id {fact_id} awaits review in {len(candidates)} scopes; name the scope",
                                field="scope", id=fact_id)  # fmt: skip
        return candidates[0]

    def _assert(
        self, caller: Caller, row: NewMemory, *, target_id: str | None = None,
        reason: str | None = None,
    ) -> WriteResponse:  # fmt: skip
        tenant = self._tenant(caller)
        policy = load_policy(tenant)
        with tenant.transaction() as tx:
            result = facts.assert_fact(tx, row, caller, policy, target_id=target_id, reason=reason)
        self.written.set()
        if result.outcome == "refused":
            assert result.tombstone is not None
            tomb = result.tombstone
            raise ConflictError(
                f"this value was retired for {tomb.subject_key}/{tomb.kind}: {tomb.reason or 'no reason given'}",
                field="text", tombstoneId=tomb.tombstone_id, reason=tomb.reason,
                tombstonedAt=tomb.created_at, factId=tomb.fact_id,
            )  # fmt: skip
        return _write_response(result)

    def _insert_episodes(self, caller: Caller, rows: Sequence[NewMemory]) -> list[WriteResponse]:
        responses = []
        with self._tenant(caller).transaction() as tx:
            for row in rows:
                record = tx.insert_memory(row)
                created = record is not None
                if record is None:
                    record = tx.get_memory(row.scope.scope_key, row.source, row.memory_id)
                    assert record is not None
                else:
                    tx.audit(caller.audit("episode.write", target_kind=row.source,
                                          target_id=row.memory_id, scope_key=row.scope.scope_key,
                                          after_digest=sha256_hex(row.event_json)))  # fmt: skip
                responses.append(WriteResponse(id=record.memory_id, created=created,
                                               outcome="created" if created else "exists",
                                               memory=MemoryView.of(record)))  # fmt: skip
        self.written.set()
        return responses

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
        when: TimeTravel | None = None,
    ) -> FactList:
        auth.require(caller, "memory.read")
        scope = auth.resolve_scope(caller, named.named_scope_fields())
        filt = lifecycle_filter(when or TimeTravel(), sources=("MEMORY_FACT",))
        records = self._tenant(caller).list_facts(
            auth.scope_key(scope), subject_key=subject_key, kind=kind, filt=filt, limit=limit
        )
        as_of = _canonical((when or TimeTravel()).as_of)
        return FactList(facts=[MemoryView.of(as_believed(r, as_of)) for r in records])

    def fact_history(self, caller: Caller, fact_id: str, named: ScopeFields) -> FactHistory:
        """Every linked version of a fact, oldest first, and the tombstones of its slot."""
        auth.require(caller, "memory.read")
        key = auth.scope_key(auth.resolve_scope(caller, named.named_scope_fields()))
        tenant = self._tenant(caller)
        versions = tenant.history(key, fact_id)
        if not versions:
            raise NotFoundError(f"no fact {fact_id} in this scope", id=fact_id)
        slots = {(v.subject_key, v.kind) for v in versions}
        tombs = [t for subject, kind in slots
                 for t in tenant.tombstones(key, subject_key=subject, kind=kind, include_lifted=True)]  # fmt: skip
        return FactHistory(versions=[MemoryView.of(v) for v in versions],
                           tombstones=[_tombstone_view(t) for t in tombs])  # fmt: skip

    def list_tombstones(
        self, caller: Caller, named: ScopeFields, *, subject_key: str | None, kind: str | None,
        include_lifted: bool,
    ) -> TombstoneList:  # fmt: skip
        auth.require(caller, "memory.read")
        key = auth.scope_key(auth.resolve_scope(caller, named.named_scope_fields()))
        tombs = self._tenant(caller).tombstones(key, subject_key=subject_key, kind=kind,
                                                include_lifted=include_lifted)  # fmt: skip
        return TombstoneList(tombstones=[_tombstone_view(t) for t in tombs])

    def audit_page(self, caller: Caller, *, after: int, limit: int) -> AuditPage:
        auth.require(caller, "audit.read")
        entries = self._tenant(caller).audit_entries(after, limit)
        views = [AuditView(**vars(e)) for e in entries]
        return AuditPage(entries=views, next_after=entries[-1].seq if len(entries) == limit else None)

    def get_policy(self, caller: Caller) -> TenantPolicy:
        auth.require(caller, "memory.read")
        return load_policy(self._tenant(caller))

    def set_policy(self, caller: Caller, policy: TenantPolicy) -> TenantPolicy:
        auth.require(caller, "policy.write")
        return save_policy(self._tenant(caller), policy, caller)

    def recall(self, caller: Caller, request: RecallRequest) -> RecallResponse:
        auth.require(caller, "memory.read")
        named = request.scope.named_scope_fields() if request.scope else {}
        scope = auth.resolve_scope(caller, named)
        query = check_text("query", request.query, QUERY_CAP)
        when = TimeTravel(request.as_of, request.valid_at, request.include_history)
        filt = lifecycle_filter(
            when,
            sources=tuple(request.sources or ("EPISODE", "MEMORY_FACT")),
            exclude_session_id=request.exclude_session_id,
        )
        if request.include_pending and filt.statuses is not None:
            filt = replace(filt, statuses=(*filt.statuses, "pending_review"))
        with self._tenant(caller).reading() as tenant:
            # Read on first use (after the query is embedded): on PostgreSQL the first read takes
            # the block's connection, which should not sit idle while the embedder works.
            policy = functools.cache(lambda: load_policy(tenant))
            outcome = recall(
                tenant,
                self.embedder,
                scope_key=auth.scope_key(scope),
                query=query,
                filt=filt,
                limit=request.limit,
                settings=self.settings.retrieval,
                trust_weight=lambda r: policy().rule(r.trust_class, r.origin).weight,
                sessions=request.sessions,
            )
        as_of = _canonical(request.as_of)
        memories = [_recalled(replace(hit, record=as_believed(hit.record, as_of)), request.explain)
                    for hit in outcome.hits]  # fmt: skip
        context = format_context(
            [FormattableMemory(m.source, m.text, m.score, m.trust_class, m.status, m.origin)
             for m in memories]  # fmt: skip
        )
        sessions = [
            RecalledSession(session_id=s.session_id, score=s.score, memory_ids=[r.memory_id for r in s.records[:10]])
            for s in outcome.sessions
        ] if request.sessions else None  # fmt: skip
        return RecallResponse(memories=memories, sessions=sessions, context=context, timings=outcome.timings)

    def health(self) -> Health:
        return Health(
            status="ok",
            version=__version__,
            embedder=self.embedder.model_id,
            storage=self.settings.storage_url().split(":", 1)[0],
        )

    def _tenant(self, caller: Caller) -> TenantStore:
        return self.store.tenant(caller.tenant)


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
    return replace(record, status="active", retired_at=None, superseded_by_id=None, status_reason=None,
                   invalid_at=None)  # fmt: skip


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
    if when.include_history:
        return CandidateFilter(
            statuses=BELIEVED_STATUSES, sources=sources, exclude_session_id=exclude_session_id,
            believed_by=as_of, valid_at=valid_at,
        )  # fmt: skip
    if as_of is not None:  # believed then, whatever happened since
        return CandidateFilter(
            statuses=None, sources=sources, exclude_session_id=exclude_session_id, as_of=as_of,
            valid_at=valid_at, expires_after=None if valid_at else as_of,
        )  # fmt: skip
    if valid_at is not None:  # believed now, true then: an expired fact held in its window, a
        # superseded one until its successor's validFrom (the store's filter closes it there)
        return CandidateFilter(
            statuses=("active", "expired", "superseded"), sources=sources, exclude_session_id=exclude_session_id,
            valid_at=valid_at,
        )  # fmt: skip
    return CandidateFilter(
        statuses=("active",), sources=sources, exclude_session_id=exclude_session_id,
        expires_after=clock.now_text(),
    )  # fmt: skip


def _write_response(result: facts.FactOutcome) -> WriteResponse:
    assert result.record is not None
    own = result.record.memory_id
    return WriteResponse(
        id=own,
        created=result.created,
        outcome=result.outcome,
        superseded_fact_ids=[r.memory_id for r in result.superseded if r.memory_id != own],
        memory=MemoryView.of(result.record),
    )


def _scope_dict(scope: ScopeColumns) -> dict[str, Any]:
    return {"agentId": scope.agent_id, "profileId": scope.profile_id,
            "privacyScope": scope.privacy_scope, "participantScopeHash": scope.participant_scope_hash,
            "sandboxEligible": scope.sandbox_eligible}  # fmt: skip


def _tombstone_view(t: Tombstone) -> TombstoneView:
    return TombstoneView(
        tombstone_id=t.tombstone_id, subject_key=t.subject_key, kind=t.kind,
        value_hash=t.value_hash, fact_id=t.fact_id, reason=t.reason, created_at=t.created_at,
        lifted_at=t.lifted_at, lift_reason=t.lift_reason,
    )  # fmt: skip


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
