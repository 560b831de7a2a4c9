"""Model-assisted operations: extraction now or queued, the queue's jobs, the model's usage, links.

With no chat model configured every operation that needs one answers 501 (``model_not_configured``,
saying how to configure one) after the caller's permission is checked; nothing else changes.
Reading jobs, usage and links needs no model.
"""

from __future__ import annotations

import functools
from typing import Any

from engramdb import clock
from engramdb.contract.events import ScopeFields
from engramdb.core import auth
from engramdb.core.assist import pipeline, queue
from engramdb.core.assist.extraction import turns_for
from engramdb.core.assist.llm.client import NOT_CONFIGURED, ChatModel
from engramdb.core.assist.work import Work
from engramdb.core.auth import Caller
from engramdb.core.policy import load_policy
from engramdb.core.shared import Area
from engramdb.errors import ModelNotConfiguredError, NotFoundError
from engramdb.models.assist import (
    AssistJobList,
    AssistJobQuery,
    AssistJobView,
    AssistUsage,
    CallView,
    ExtractRequest,
    ExtractResult,
    FactLinks,
    LinkView,
    PurposeUsage,
    UsageQuery,
)
from engramdb.models.memories import MemoryQuery
from engramdb.storage.assist.port import UsageTotals


class AssistOperations(Area):
    """Extraction and its queue, model usage and links."""

    @functools.cached_property
    def _chat(self) -> ChatModel | None:
        return ChatModel(self.shared.settings.llm) if self.shared.settings.llm.configured else None

    def chat_model(self) -> ChatModel:
        """The configured chat model, or ModelNotConfiguredError (501) saying how to set one."""
        if self._chat is None:
            raise ModelNotConfiguredError(NOT_CONFIGURED)
        return self._chat

    def work(self, caller: Caller, named: ScopeFields | dict[str, Any] | None, job_id: str | None = None) -> Work:
        """The context of one model-assisted run in the caller's scope (501 without a model)."""
        fields = named.named_scope_fields() if isinstance(named, ScopeFields) else dict(named or {})
        scope = self.shared.scope(caller, fields)
        chat = self.chat_model()
        tenant = self.shared.tenant(caller)
        return Work(
            caller,
            scope,
            auth.scope_key(scope),
            tenant,
            load_policy(tenant),
            chat,
            self.shared.embedder,
            self.shared.settings.retrieval,
            job_id=job_id,
        )

    def extract(self, caller: Caller, body: ExtractRequest) -> ExtractResult:
        """Extract facts from turns now, judge them, and write them as derived facts."""
        auth.require(caller, "memory.write")
        with self.work(caller, body.scope).accounted() as work:
            result = pipeline.extract(work, turns_for(work, body))
        self.shared.written.set()
        return result

    def queue_extraction(self, caller: Caller, body: ExtractRequest) -> AssistJobView:
        """Queue an extraction for the background workers; answer its job at once."""
        auth.require(caller, "memory.write")
        work = self.work(caller, body.scope)
        turns_for(work, body)  # refuse now what the job could never read (an unknown episode)
        job = queue.new_job(caller, work.scope, body, self.shared.settings.llm.job_attempts)
        with work.tenant.transaction() as tx:
            queue.enqueue(tx, job, caller)
        self.shared.queued.set()
        stored = work.tenant.get_job(job.job_id)
        assert stored is not None
        return queue.job_view(stored)

    def list_assist_jobs(self, caller: Caller, query: AssistJobQuery) -> AssistJobList:
        auth.require(caller, "memory.read")
        keys = self._visible_scopes(caller, query.named_scope_fields())
        jobs = self.shared.tenant(caller).list_jobs(scope_keys=keys, state=query.state, limit=query.limit)
        return AssistJobList(jobs=[queue.job_view(j) for j in jobs])

    def get_assist_job(self, caller: Caller, job_id: str) -> AssistJobView:
        auth.require(caller, "memory.read")
        job = self.shared.tenant(caller).get_job(job_id)
        keys = self._visible_scopes(caller, {})
        if job is None or (keys is not None and job.scope_key not in keys):
            raise NotFoundError(f"no model job {job_id} in the scopes this key may read", id=job_id)
        return queue.job_view(job)

    def _visible_scopes(self, caller: Caller, named: dict[str, Any]) -> list[str] | None:
        """The scope keys a listing may show (None: every scope of the tenant)."""
        named = self.shared.hashed(caller, named)
        if caller.role in ("reviewer", "admin") and not named:
            return None
        if set(auth.SCOPE_FIELDS) <= set(caller.grant) | set(named):
            return [auth.scope_key(self.shared.scope(caller, named))]
        bound = auth.grant_columns(caller)
        for field, value in named.items():
            if bound.setdefault(auth.SCOPE_COLUMNS[field], value) != value:
                return []  # a name the key's grant contradicts: no scope has both
        return self.shared.tenant(caller).scope_keys(bound)

    def assist_usage(self, caller: Caller, query: UsageQuery) -> AssistUsage:
        """The tenant's model calls summed by purpose, the latest calls, and the queue's states."""
        auth.require(caller, "audit.read")
        tenant = self.shared.tenant(caller)
        totals = tenant.model_usage(clock.normalize(query.since) if query.since else None)
        states: dict[str, int] = {}
        for job in tenant.list_jobs(scope_keys=None, state=None, limit=500):
            states[job.state] = states.get(job.state, 0) + 1
        llm = self.shared.settings.llm
        return AssistUsage(
            configured=llm.configured,
            model=llm.model or None,
            by_purpose=[_purpose(t) for t in totals],
            total=_purpose(UsageTotals("all", *(sum(getattr(t, f) for t in totals) for f in _SUMMED))),
            recent=[CallView(**vars(c)) for c in tenant.model_calls(query.recent)] if query.recent else [],
            jobs=states,
        )

    def fact_links(self, caller: Caller, fact_id: str, query: MemoryQuery) -> FactLinks:
        """Links a model's work made from or to a fact (verdicts, consolidations, evidence)."""
        auth.require(caller, "memory.read")
        key = auth.scope_key(self.shared.scope(caller, query.named_scope_fields()))
        tenant = self.shared.tenant(caller)
        if tenant.get_memory(key, "MEMORY_FACT", fact_id) is None:
            raise NotFoundError(f"no fact {fact_id} in this scope", id=fact_id)
        return FactLinks(
            links=[
                LinkView(**{k: v for k, v in vars(link).items() if k not in ("link_id", "scope_key")})
                for link in tenant.links_of(key, fact_id)
            ]
        )


_SUMMED = ("calls", "failed", "prompt_tokens", "completion_tokens", "cost", "latency_ms")


def _purpose(t: UsageTotals) -> PurposeUsage:
    return PurposeUsage(
        purpose=t.purpose,
        calls=t.calls,
        failed=t.failed,
        prompt_tokens=t.prompt_tokens,
        completion_tokens=t.completion_tokens,
        cost=t.cost,
        model_ms=t.latency_ms,
    )
