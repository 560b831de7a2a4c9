"""One request's model work: who asks, in which scope, with which model, and what it cost."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from engramdb.config import RetrievalSettings
from engramdb.contract.events import Scope
from engramdb.core.assist.llm.client import CallRecord, ChatModel
from engramdb.core.assist.llm.prompts import Prompt
from engramdb.core.auth import Caller
from engramdb.core.embedding import Embedder
from engramdb.core.policy import TenantPolicy
from engramdb.errors import EngramError
from engramdb.models.assist import UsageView
from engramdb.storage.assist.port import ModelCall
from engramdb.storage.port import TenantStore, Tombstone


@dataclass
class Work:
    """The context every step of one extraction, reflection or consolidation shares."""

    caller: Caller
    scope: Scope
    scope_key: str
    tenant: TenantStore
    policy: TenantPolicy
    chat: ChatModel
    embedder: Embedder
    retrieval: RetrievalSettings
    job_id: str | None = None
    calls: list[CallRecord] = field(default_factory=list)
    recorded: bool = False  # the calls are in the ledger (written with the run's results)
    # Called between steps, outside any transaction: a queued job waits there while the server
    # answers recalls (core/foreground.py); a request's own run does not wait.
    pause: Callable[[], object] = lambda: None

    def ask(self, prompt: Prompt, data: dict[str, Any]) -> Any:
        """The model's checked answer; every request it took lands in ``calls``."""
        return self.chat.ask(prompt, data, self.calls.append)

    @property
    def visibility(self) -> str:
        """The visibility of what is written in this scope (as the MCP tools write it)."""
        return "shared" if self.scope.privacy_scope == "shared" else "participant"

    @functools.cached_property
    def tombstones(self) -> list[Tombstone]:
        """The scope's unlifted tombstones, read once per run."""
        return self.tenant.tombstones(self.scope_key, subject_key=None, kind=None, include_lifted=False)

    def usage(self) -> UsageView:
        return UsageView(
            calls=len(self.calls),
            prompt_tokens=sum(c.prompt_tokens for c in self.calls),
            completion_tokens=sum(c.completion_tokens for c in self.calls),
            cost=sum(c.cost for c in self.calls),
            model_ms=sum(c.latency_ms for c in self.calls),
        )

    @contextmanager
    def accounted(self) -> Iterator[Work]:
        """The run's block: when it fails, its model calls still reach the ledger."""
        try:
            yield self
        except EngramError:
            self.record_calls()
            raise

    def record_calls(self) -> None:
        """Put the run's calls in the ledger, in a transaction of their own (once)."""
        if self.calls and not self.recorded:
            with self.tenant.transaction() as tx:
                tx.record_calls(self.ledger())
            self.recorded = True

    def ledger(self) -> list[ModelCall]:
        """The calls as ledger rows, attributed to this run's key, scope and job."""
        return [
            ModelCall(
                at=c.at,
                purpose=c.purpose,
                model=c.model,
                prompt_version=c.prompt_version,
                scope_key=self.scope_key,
                job_id=self.job_id,
                actor_key_id=self.caller.key_id,
                prompt_tokens=c.prompt_tokens,
                completion_tokens=c.completion_tokens,
                estimated=c.estimated,
                cost=c.cost,
                latency_ms=c.latency_ms,
                outcome=c.outcome,
                error=c.error,
            )
            for c in self.calls
        ]
