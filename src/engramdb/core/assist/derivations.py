"""Derivations over what the scope holds: reflection, consolidation (and undoing it), and the
Mem0-style ``add`` (messages -> episodes -> extraction and judgement)."""

from __future__ import annotations

from engramdb import clock
from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.contract.writes import EpisodeWrite
from engramdb.core import auth
from engramdb.core.assist import consolidation, pipeline, reflection
from engramdb.core.assist.extraction import Turn
from engramdb.core.assist.operations import AssistOperations
from engramdb.core.auth import Caller
from engramdb.core.policy import load_policy
from engramdb.core.shared import Area, Shared
from engramdb.core.views import memory_view
from engramdb.core.writes import WriteOperations
from engramdb.errors import InvalidInputError
from engramdb.models.assist import DerivedItem, UsageView
from engramdb.models.derive import (
    AddOptions,
    AddRequest,
    AddResult,
    ConsolidateRequest,
    ConsolidateResult,
    Message,
    ReflectRequest,
    ReflectResult,
    UndoConsolidation,
    UndoneConsolidation,
)

_SUMMARY_CHARS = 300


class DerivationOperations(Area):
    """Reflection, consolidation and ``add``: the model's work (``assist``) over what ``writes`` stored."""

    def __init__(self, shared: Shared, assist: AssistOperations, writes: WriteOperations) -> None:
        super().__init__(shared)
        self.assist = assist
        self.writes = writes

    def reflect(self, caller: Caller, body: ReflectRequest) -> ReflectResult:
        """Write reflections over current, stated facts (each derived, with its evidence linked)."""
        auth.require(caller, "memory.write")
        work = self.assist.work(caller, body.scope)
        facts = reflection.evidence(work, body)
        if len(facts) < 2:  # nothing to see beyond the facts themselves: no model call
            return ReflectResult(items=[], evidence_fact_ids=[f.memory_id for f in facts], usage=work.usage())
        with work.accounted():
            items = reflection.reflect(work, body, facts)
        self.shared.written.set()
        return ReflectResult(
            items=items,
            evidence_fact_ids=[f.memory_id for f in facts],
            model=work.chat.model,
            prompt_version=reflection.REFLECT.version,
            usage=work.usage(),
        )

    def consolidate(self, caller: Caller, body: ConsolidateRequest) -> ConsolidateResult:
        """Merge near-duplicate current facts of a slot (or say what would be merged)."""
        auth.require(caller, "memory.write")
        work = self.assist.work(caller, body.scope)
        found = consolidation.groups(work, body)
        if not found:
            return ConsolidateResult(groups=[], usage=work.usage())
        with work.accounted():
            result = consolidation.consolidate(work, found, body.dry_run)
        self.shared.written.set()
        return ConsolidateResult(
            groups=result, model=work.chat.model, prompt_version=consolidation.CONSOLIDATE.version, usage=work.usage()
        )

    def undo_consolidation(self, caller: Caller, fact_id: str, body: UndoConsolidation) -> UndoneConsolidation:
        """Archive a merged fact; its originals are current again (no model needed)."""
        auth.require(caller, "memory.write")
        scope = self.shared.scope(caller, body.scope.named_scope_fields() if body.scope else {})
        tenant = self.shared.tenant(caller)
        policy = load_policy(tenant)
        with tenant.transaction() as tx:
            merged, restored = consolidation.undo(tx, caller, policy, auth.scope_key(scope), fact_id, body.reason)
        self.shared.written.set()
        return UndoneConsolidation(merged=memory_view(merged), restored=[memory_view(r) for r in restored])

    def add(self, caller: Caller, body: AddRequest, query: AddOptions) -> AddResult:
        """Store the messages as episodes; with ``infer``, extract and judge facts from them now."""
        auth.require(caller, "memory.write")
        named = query.named_scope_fields()
        work = self.assist.work(caller, named) if query.infer else None  # 501 before anything is written
        scope = self.shared.scope(caller, named)
        pairs = _pairs(body.messages)
        if not pairs:
            raise InvalidInputError("no user or assistant message with text: nothing to remember", field="messages")
        session = query.session_id or f"add:{sha256_hex(canonical_json([m.wire() for m in body.messages]))[:16]}"
        observed = body.observed_at or clock.now_text()
        writes = [
            EpisodeWrite.model_validate(
                {
                    **scope.wire(),
                    "runtime": "custom",
                    "externalSessionId": session,
                    "turnIndex": index,
                    "userText": user,
                    "assistantText": assistant,
                    "summary": " ".join((user or assistant).split())[:_SUMMARY_CHARS],
                    "conversationKind": "direct",
                    "visibility": "shared" if scope.privacy_scope == "shared" else "participant",
                    "trustClass": body.trust_class,
                    "originClass": "conversation",
                    "observedAt": observed,
                    "provenance": "engram:add",
                }
            )
            for index, (user, assistant) in enumerate(pairs)
        ]
        # The service these operations are mixed into (MemoryService) writes episodes.
        stored = self.writes.write_episodes(caller, writes)
        episodes = [w.id for w in stored]
        if work is None:
            return AddResult(episodes=episodes, created=[], updated=[], parked=[], skipped=[])
        turns = [
            Turn(w.id, user, assistant, clock.normalize(observed), body.trust_class)
            for w, (user, assistant) in zip(stored, pairs, strict=True)
        ]
        with work.accounted():
            result = pipeline.extract(work, turns)
        self.shared.written.set()
        return _grouped(episodes, result.items, result.usage)


def _pairs(messages: list[Message]) -> list[tuple[str, str]]:
    """User/assistant pairs in order: a user message and the assistant message after it."""
    pairs: list[tuple[str, str]] = []
    user: str | None = None
    for message in messages:
        text = message.content.strip()
        if message.role not in ("user", "assistant") or not text:
            continue
        if message.role == "user":
            if user is not None:
                pairs.append((user, ""))
            user = text
        else:
            pairs.append((user or "", text))
            user = None
    if user is not None:
        pairs.append((user, ""))
    return pairs


def _grouped(episodes: list[str], items: list[DerivedItem], usage: UsageView) -> AddResult:
    groups: dict[str, list[DerivedItem]] = {"created": [], "updated": [], "parked": [], "skipped": []}
    for item in items:
        groups[item.action if item.action in groups else "skipped"].append(item)
    return AddResult(episodes=episodes, usage=usage, **groups)
