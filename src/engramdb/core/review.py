"""The review queue: facts a model wrote, or untrusted ones, wait here for a person."""

from __future__ import annotations

import json
from dataclasses import replace

from engramdb import clock
from engramdb.contract.bounds import REASON_CAP, check_text
from engramdb.contract.events import Scope, ScopeFields
from engramdb.contract.writes import FactWrite
from engramdb.core import auth, decisions, facts
from engramdb.core.assist import links
from engramdb.core.auth import Caller
from engramdb.core.policy import load_policy
from engramdb.core.rows import fact_row
from engramdb.core.shared import Area
from engramdb.core.views import memory_view, scope_view
from engramdb.core.writes import write_response
from engramdb.errors import AuthorizationError, ConflictError, NotFoundError
from engramdb.models.lifecycle import (
    EditAndApprove,
    RejectDecision,
    ReviewDecision,
    ReviewItem,
    ReviewQuery,
    ReviewQueue,
)
from engramdb.models.memories import MemoryView, WriteResponse
from engramdb.storage.port import MemoryRecord, Transaction


class ReviewOperations(Area):
    """Listing and deciding facts that wait for a reviewer."""

    def review_queue(self, caller: Caller, query: ReviewQuery) -> ReviewQueue:
        """Facts awaiting review anywhere in the tenant, oldest first."""
        auth.require(caller, "review.read")
        before = clock.later(-query.older_than_seconds) if query.older_than_seconds else None
        tenant, filters = self.shared.tenant(caller), {"kind": query.kind, "subject_key": query.subject_key}
        pending = tenant.review_queue(**filters, recorded_before=before, limit=query.limit)
        total = tenant.count_review(**filters, recorded_before=before) if query.count else None
        return ReviewQueue(
            items=[ReviewItem(fact=memory_view(r), scope=scope_view(s)) for r, s in pending], total=total
        )

    def approve(self, caller: Caller, fact_id: str, body: ReviewDecision) -> WriteResponse:
        self._require_reviewer(caller, fact_id)
        tenant = self.shared.tenant(caller)
        policy = load_policy(tenant)
        key = self._named_key(caller, body.scope)  # before the transaction: it may make the salt
        with tenant.transaction() as tx:
            pending = self._pending(caller, tx, fact_id, key)
            now = clock.now_text()
            result = decisions.approve(tx, pending, caller, policy, at=now, reason=body.reason)
            links.on_approved(tx, caller, _approved(result), at=now)  # a model's proposed links act now
        self.shared.written.set()
        return write_response(result)

    def reject(self, caller: Caller, fact_id: str, body: RejectDecision) -> MemoryView:
        self._require_reviewer(caller, fact_id)
        reason = check_text("reason", body.reason, REASON_CAP)
        key = self._named_key(caller, body.scope)
        with self.shared.tenant(caller).transaction() as tx:
            pending = self._pending(caller, tx, fact_id, key)
            record = decisions.reject(tx, pending, caller, reason=reason, at=clock.now_text())
            links.on_rejected(tx, record, at=record.retired_at or clock.now_text())
        return memory_view(record)

    def edit_and_approve(self, caller: Caller, fact_id: str, body: EditAndApprove) -> WriteResponse:
        """Replace a pending fact's text with the reviewer's, then approve the edited fact."""
        self._require_reviewer(caller, fact_id)
        tenant = self.shared.tenant(caller)
        policy = load_policy(tenant)
        now = clock.now_text()
        key = self._named_key(caller, body.scope)  # before the transaction: it may make the salt
        with tenant.transaction() as tx:
            pending = self._pending(caller, tx, fact_id, key)
            event = json.loads(pending.event_json)
            scope = Scope.model_validate({k: event.pop(k) for k in auth.SCOPE_FIELDS})
            event.pop("factId")
            event.update(text=body.text, sourceEventId=f"review-edit:{fact_id}")
            row = replace(
                fact_row(FactWrite.model_validate(event).to_event(scope), scope, now, pending.origin),
                status="pending_review",
                active_from=None,
            )
            edited = tx.insert_memory(row) or tx.get_memory(pending.scope_key, "MEMORY_FACT", row.memory_id)
            assert edited is not None
            why = f"edited in review: {body.reason}" if body.reason else "edited in review"
            # The draft holds nowhere: the reviewer's text replaces it over the same valid time.
            facts.retire(
                tx,
                pending,
                caller,
                status="superseded",
                at=now,
                reason=why,
                successor=row.memory_id,
                invalid_at=row.valid_from,
                tombstone=False,
            )
            result = decisions.approve(tx, edited, caller, policy, at=now, reason=why, supersedes=fact_id)
            links.on_approved(tx, caller, _approved(result), at=now, drafts=(fact_id,))
        self.shared.written.set()
        return write_response(result)

    def _require_reviewer(self, caller: Caller, fact_id: str) -> None:
        """Refuse non-reviewers, and audit the refusal: an agent approving itself is an event."""
        try:
            auth.require(caller, "review.decide")
        except AuthorizationError:
            with self.shared.tenant(caller).transaction() as tx:
                tx.audit(
                    caller.audit(
                        "review.denied",
                        target_kind="MEMORY_FACT",
                        target_id=fact_id,
                        reason=f"{caller.role} keys may not decide reviews",
                    )
                )
            raise

    def _named_key(self, caller: Caller, named: ScopeFields | None) -> str | None:
        """The scope key a decision names, or None. Resolved before the decision's transaction: a
        ``userId`` may need the tenant's participant salt made, in a transaction of its own (the
        write lock is not reentrant: inside the decision's it waited on itself forever)."""
        if named is None or not named.named_scope_fields():
            return None
        return auth.scope_key(self.shared.scope(caller, named.named_scope_fields()))

    def _pending(self, caller: Caller, tx: Transaction, fact_id: str, key: str | None) -> MemoryRecord:
        """Find a fact awaiting review by id; the scope (its key) disambiguates an id found twice."""
        if key is not None:
            found = tx.get_memory(key, "MEMORY_FACT", fact_id)
            candidates = [found] if found else []
        else:
            listed = self.shared.tenant(caller).facts_by_id(fact_id, ("pending_review",))
            candidates = [r for c in listed if (r := tx.get_memory(c.scope_key, "MEMORY_FACT", fact_id))]
        if not candidates:
            raise NotFoundError(f"no fact {fact_id} awaiting review", id=fact_id)
        if len(candidates) > 1:
            raise ConflictError(
                f"fact id {fact_id} awaits review in {len(candidates)} scopes; name the scope",
                field="scope",
                id=fact_id,
            )
        decisions.require_pending(candidates[0])  # an edit of a decided fact undid its rejection or retraction
        return candidates[0]


def _approved(result: facts.FactOutcome) -> MemoryRecord:
    assert result.record is not None
    return result.record
