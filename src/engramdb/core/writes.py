"""Writing memories and changing beliefs: episodes, facts, corrections, retractions, lifts."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from engramdb import clock, traces
from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import auth, batches, decisions, facts
from engramdb.core.assist import queue
from engramdb.core.assist.llm.client import NOT_CONFIGURED
from engramdb.core.auth import Caller
from engramdb.core.entity_links import Written, link_entities
from engramdb.core.policy import load_policy
from engramdb.core.rows import episode_row, fact_row, said
from engramdb.core.shared import Area
from engramdb.core.views import memory_view, tombstone_view
from engramdb.errors import ConflictError, EngramError, InvalidInputError, ModelNotConfiguredError, NotFoundError
from engramdb.models.assist import ExtractRequest
from engramdb.models.lifecycle import CorrectRequest, LiftRequest, RetractRequest, TombstoneView
from engramdb.models.memories import (
    BatchOptions,
    EpisodeBatch,
    EpisodeBatchResult,
    EpisodeOptions,
    MemoryView,
    WriteOptions,
    WriteResponse,
)
from engramdb.models.problems import validation_problem
from engramdb.storage.port import MemoryRecord, NewMemory, Transaction

MAX_BATCH = 100


class WriteOperations(Area):
    """Operations that store memories or change what is believed."""

    def write_episode(self, caller: Caller, body: EpisodeWrite, query: EpisodeOptions | None = None) -> WriteResponse:
        """Store an episode; with ``extract``, queue its extraction in the same transaction."""
        auth.require(caller, "memory.write")
        scope = self.shared.scope(caller, body.named_scope_fields())
        row = episode_row(body.to_event(scope), scope, clock.now_text())
        if query is None or not query.extract:
            return self._insert_episodes(caller, [row])[0]
        if not self.shared.settings.llm.configured:
            raise ModelNotConfiguredError(NOT_CONFIGURED)
        extract = ExtractRequest.model_validate({"episodeIds": [row.memory_id]})
        job = queue.new_job(caller, scope, extract, self.shared.settings.llm.job_attempts)
        answer = self._insert_episodes(caller, [row], then=lambda tx, _: queue.enqueue(tx, job, caller))[0]
        self.shared.queued.set()
        return answer.model_copy(update={"extraction_job_id": job.job_id})

    def write_episodes(self, caller: Caller, bodies: Sequence[EpisodeWrite]) -> list[WriteResponse]:
        """Write many episodes in one transaction (bulk import, evaluation ingest)."""
        auth.require(caller, "memory.write")
        now = clock.now_text()
        rows = []
        for body in bodies:
            scope = self.shared.scope(caller, body.named_scope_fields())
            rows.append(episode_row(body.to_event(scope), scope, now))
        return self._insert_episodes(caller, rows)

    def write_episode_batch(
        self, caller: Caller, body: EpisodeBatch, query: BatchOptions | None = None
    ) -> EpisodeBatchResult:
        """Write up to 100 episodes in one transaction; each item answers for itself.

        Items are validated one by one first, so a bad item is refused alone (its problem JSON
        in its slot) and the good ones are still written, together. ``dryRun`` answers what would
        be written and writes nothing; ``extract`` queues extraction of the episodes created.
        """
        auth.require(caller, "memory.write")
        options = query or BatchOptions()
        if options.extract and not options.dry_run and not self.shared.settings.llm.configured:
            raise ModelNotConfiguredError(NOT_CONFIGURED)
        answers, items = self._batch_items(caller, body)
        rows = [row for _, _, row in items]
        if options.dry_run:
            for (slot, _, _), answer in zip(items, batches.preview(self.shared.tenant(caller), rows), strict=True):
                answers[slot] = answer
            return EpisodeBatchResult(results=answers)
        jobs: dict[str, str] = {}

        def extract(tx: Transaction, written: list[WriteResponse]) -> None:
            created = [(scope, w) for (_, scope, _), w in zip(items, written, strict=True) if w.created]
            jobs.update(batches.queue_extractions(tx, caller, created, self.shared.settings.llm.job_attempts))

        written = self._insert_episodes(caller, rows, then=extract if options.extract else None) if rows else []
        if jobs:
            self.shared.queued.set()
        for (slot, _, _), w in zip(items, written, strict=True):
            job = {"extraction_job_id": jobs[w.id]} if w.id in jobs else {}
            answers[slot] = {"status": 201 if w.created else 200, **w.model_copy(update=job).wire()}
        return EpisodeBatchResult(results=answers)

    def _batch_items(
        self, caller: Caller, body: EpisodeBatch
    ) -> tuple[list[dict[str, Any]], list[tuple[int, Scope, NewMemory]]]:
        """The batch's answers so far (the refused items') and its valid items: (slot, scope, row)."""
        if len(body.episodes) > MAX_BATCH:
            raise InvalidInputError(f"at most {MAX_BATCH} episodes per batch", field="episodes")
        answers: list[dict[str, Any]] = [{} for _ in body.episodes]
        items, now = [], clock.now_text()
        shared = body.scope.named_scope_fields() if body.scope else {}
        for i, item in enumerate(body.episodes):
            try:
                episode = EpisodeWrite.model_validate({**shared, **item} if isinstance(item, dict) else item)
                scope = self.shared.scope(caller, episode.named_scope_fields())
                items.append((i, scope, episode_row(episode.to_event(scope), scope, now)))
            except ValidationError as error:
                answers[i] = {"status": 422, **validation_problem(list(error.errors()))}
            except EngramError as error:
                answers[i] = {"status": error.http_status, **error.to_dict()}
        return answers, items

    def write_fact(self, caller: Caller, body: FactWrite, query: WriteOptions | None = None) -> WriteResponse:
        """Store a fact; origin ``derived`` when a model wrote it (the trust policy applies)."""
        auth.require(caller, "memory.write")
        scope = self.shared.scope(caller, body.named_scope_fields())
        origin = (query.origin if query else None) or "stated"
        return self._assert(caller, fact_row(body.to_event(scope), scope, clock.now_text(), origin))

    def correct_fact(
        self, caller: Caller, fact_id: str, body: CorrectRequest, query: WriteOptions | None = None
    ) -> WriteResponse:
        """Replace a current fact's value with a new fact (the old one is tombstoned)."""
        auth.require(caller, "memory.write")
        scope = self.shared.scope(caller, body.scope.named_scope_fields() if body.scope else {})
        tenant = self.shared.tenant(caller)
        current = tenant.get_memory(auth.scope_key(scope), "MEMORY_FACT", fact_id)
        if current is None:
            raise NotFoundError(f"no fact {fact_id} in this scope", id=fact_id)
        if body.valid_from and current.valid_from and clock.parse(body.valid_from) < clock.parse(current.valid_from):
            # It would be older than the fact it corrects, so the age guard would keep it as history.
            raise InvalidInputError(
                f"a correction cannot start before the fact it corrects (validFrom {current.valid_from})",
                field="validFrom",
            )
        origin = (query.origin if query else None) or current.origin
        row = fact_row(
            FactWrite.model_validate(_corrected(current, fact_id, body)).to_event(scope),
            scope,
            clock.now_text(),
            origin,
        )
        if current.status != "active" and tenant.get_memory(row.scope.scope_key, "MEMORY_FACT", row.memory_id) is None:
            # Only a current fact can be corrected, also when the correction would wait for review;
            # the same correction sent again (a retry) still answers the one already stored.
            raise ConflictError(
                f"fact {fact_id} is {current.status}, not current; only a current fact can be corrected",
                field="fact_id",
                status=current.status,
                supersededByFactId=current.superseded_by_id,
            )
        return self._assert(caller, row, target_id=fact_id, reason=body.reason)

    def retract_fact(self, caller: Caller, fact_id: str, body: RetractRequest) -> MemoryView:
        """Retract a current fact: no longer current, its value tombstoned."""
        auth.require(caller, "memory.write")
        scope = self.shared.scope(caller, body.scope.named_scope_fields() if body.scope else {})
        with self.shared.tenant(caller).transaction() as tx:
            record = facts.retract(tx, auth.scope_key(scope), fact_id, caller, reason=body.reason, at=clock.now_text())
        return memory_view(record)

    def lift_tombstone(self, caller: Caller, tombstone_id: str, body: LiftRequest) -> TombstoneView:
        """Let a tombstoned value become current again."""
        auth.require(caller, "tombstone.lift")
        with self.shared.tenant(caller).transaction() as tx:
            tomb = decisions.lift(tx, tombstone_id, caller, reason=body.reason, at=clock.now_text())
        return tombstone_view(tomb)

    def _assert(
        self,
        caller: Caller,
        row: NewMemory,
        *,
        target_id: str | None = None,
        reason: str | None = None,
    ) -> WriteResponse:
        tenant = self.shared.tenant(caller)
        policy = load_policy(tenant)
        with traces.span("engramdb.write.fact", {"engramdb.write.corrects": target_id is not None}) as writing:
            with tenant.transaction() as tx:
                result = facts.assert_fact(tx, row, caller, policy, target_id=target_id, reason=reason)
                if result.created and result.record is not None and self.shared.settings.retrieval.entity_links:
                    fact = Written("MEMORY_FACT", result.record.rowid, row.memory_id, row.scope, row.text)
                    link_entities(tx, caller, [fact], row.recorded_at)
            writing.set_attributes(
                {"engramdb.write.outcome": result.outcome, "engramdb.write.superseded": len(result.superseded)}
            )
        self.shared.written.set()
        if result.outcome == "refused":
            assert result.tombstone is not None
            tomb = result.tombstone
            raise ConflictError(
                f"this value was retired for {tomb.subject_key}/{tomb.kind}: {tomb.reason or 'no reason given'}",
                field="text",
                tombstoneId=tomb.tombstone_id,
                reason=tomb.reason,
                tombstonedAt=tomb.created_at,
                factId=tomb.fact_id,
            )
        return write_response(result)

    def _insert_episodes(
        self,
        caller: Caller,
        rows: Sequence[NewMemory],
        then: Callable[[Transaction, list[WriteResponse]], object] | None = None,
    ) -> list[WriteResponse]:
        responses, written, audits = [], [], []
        with (
            traces.span("engramdb.write.episodes", {"engramdb.write.rows": len(rows)}) as writing,
            self.shared.tenant(caller).transaction() as tx,
        ):
            for row in rows:
                record = tx.insert_memory(row)
                created = record is not None
                if record is None:
                    record = tx.get_memory(row.scope.scope_key, row.source, row.memory_id)
                    assert record is not None
                else:
                    written.append(Written("EPISODE", record.rowid, row.memory_id, row.scope, said(row.text)))
                    audits.append(
                        caller.audit(
                            "episode.write",
                            target_kind=row.source,
                            target_id=row.memory_id,
                            scope_key=row.scope.scope_key,
                            after_digest=facts.state_digest(record),
                        )
                    )
                responses.append(
                    WriteResponse(
                        id=record.memory_id,
                        created=created,
                        outcome="created" if created else "exists",
                        memory=memory_view(record),
                    )
                )
            if audits:  # in one go: the chain's head and the revoked-key check read once a batch, not once a row
                tx.audit_many(audits)
            if written and self.shared.settings.retrieval.entity_links:
                link_entities(tx, caller, written, written_at(rows))
            if then is not None:
                then(tx, responses)
            writing.set_attribute("engramdb.write.created", sum(1 for r in responses if r.created))
        self.shared.written.set()
        return responses


def written_at(rows: Sequence[NewMemory]) -> str:
    """The record time of a batch of rows (one time for the whole write)."""
    return rows[0].recorded_at


def _corrected(current: MemoryRecord, fact_id: str, body: CorrectRequest) -> dict[str, Any]:
    """The contract event of a correction: the corrected fact's, with the new text and a link to it."""
    event: dict[str, Any] = json.loads(current.event_json)
    for stale in ("factId", "supersedesFactId", "validUntil", *auth.SCOPE_FIELDS):
        event.pop(stale, None)
    event.update(
        text=body.text,
        active=True,
        supersedesFactId=fact_id,
        sourceEventId=body.source_event_id or f"correction:{fact_id}",
        validFrom=body.valid_from or current.valid_from or clock.now_text(),
        confidence=body.confidence if body.confidence is not None else current.confidence,
        provenance=body.provenance or event.get("provenance", ""),
    )
    return event


def write_response(result: facts.FactOutcome) -> WriteResponse:
    """Return the answer to a fact write from what the lifecycle did."""
    assert result.record is not None
    own = result.record.memory_id
    return WriteResponse(
        id=own,
        created=result.created,
        outcome=result.outcome,
        superseded_fact_ids=[r.memory_id for r in result.superseded if r.memory_id != own],
        memory=memory_view(result.record),
    )
