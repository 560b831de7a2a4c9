"""The storage port of model-assisted memory: the records, and what a transaction and a tenant
store add for them (``storage/assist/sql.py`` holds the SQL both backends share).

- ``model_links``: a typed link between two memories of one scope, with the model's verdict,
  reason and confidence, and its state (``applied``, ``proposed`` until a reviewer approves the
  fact it comes from, ``refused``, ``rejected``, ``undone``). Types: SUPERSEDES, REFINES,
  COEXISTS, CONSOLIDATES, DERIVED_FROM. Kept behind ``core/assist/links.py``, so they can later
  become relationships of the knowledge plane.
- ``model_jobs``: the extraction queue (``queued`` -> ``running`` -> ``done`` or ``failed``).
- ``model_calls``: one row per request to the model: tokens, cost, latency, outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from engramdb.storage.rows import MemoryRecord

LINK_COLUMNS = (
    "link_id, scope_key, link_type, from_id, to_id, to_source, state, verdict, confidence, reason, "
    "prompt_version, model, created_at, updated_at"
)
JOB_COLUMNS = (
    "job_id, kind, scope_key, scope_json, input_json, state, attempts, max_attempts, next_at, error, "
    "result_json, actor_key_id, actor_role, created_at, updated_at, started_at, finished_at, "
    "run_cpu_ms"
)
CALL_COLUMNS = (
    "at, purpose, model, prompt_version, scope_key, job_id, actor_key_id, prompt_tokens, "
    "completion_tokens, estimated, cost, latency_ms, outcome, error"
)


@dataclass(frozen=True)
class LinkRecord:
    """A link from one memory to another of the same scope (``from_id`` was derived or judged)."""

    link_id: str
    scope_key: str
    link_type: str
    from_id: str
    to_id: str
    to_source: str  # MEMORY_FACT or EPISODE
    state: str
    verdict: str | None
    confidence: float | None
    reason: str | None
    prompt_version: str | None
    model: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class JobRecord:
    """A queued piece of model work, run as the key that asked for it."""

    job_id: str
    kind: str
    scope_key: str
    scope_json: str
    input_json: str
    state: str  # queued, running, done, failed
    attempts: int
    max_attempts: int
    next_at: str  # queued: when it is due; running: when its lease ends
    error: str | None
    result_json: str | None
    actor_key_id: str | None
    actor_role: str | None
    created_at: str
    updated_at: str
    started_at: str | None = None
    finished_at: str | None = None
    run_cpu_ms: float | None = None


@dataclass(frozen=True)
class ModelCall:
    """One request to the model, as the ledger keeps it."""

    at: str
    purpose: str
    model: str
    prompt_version: str
    scope_key: str | None
    job_id: str | None
    actor_key_id: str | None
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    cost: float
    latency_ms: float
    outcome: str
    error: str | None


@dataclass(frozen=True)
class SlotText:
    """A fact of a slot as screening reads it: its value and lifecycle, not its event."""

    memory_id: str
    text: str
    status: str
    status_reason: str | None
    superseded_by_id: str | None


@dataclass(frozen=True)
class UsageTotals:
    """A tenant's model calls of one purpose, summed."""

    purpose: str
    calls: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    latency_ms: float


class AssistWrites(Protocol):
    """What a write transaction adds for model-assisted memory."""

    def put_link(self, link: LinkRecord) -> LinkRecord:
        """Store a link, or replace the one with its id (state, verdict, reason, confidence)."""
        ...

    def links_from(self, scope_key: str, from_id: str, states: Sequence[str]) -> list[LinkRecord]:
        """Return the links from ``from_id`` in these states, as this transaction sees them."""
        ...

    def enqueue_job(self, job: JobRecord) -> bool:
        """Store a job; False (and nothing changed) when one with its id exists."""
        ...

    def claim_job(self, now: str, lease_until: str) -> JobRecord | None:
        """Take the oldest due job (queued and due, or running past its lease) and mark it running."""
        ...

    def finish_job(
        self,
        job_id: str,
        *,
        state: str,
        at: str,
        next_at: str,
        error: str | None,
        result_json: str | None,
        cpu_ms: float | None = None,
    ) -> None:
        """Record a job's end (done, failed) or its next try (queued at ``next_at``)."""
        ...

    def record_calls(self, calls: Sequence[ModelCall]) -> None:
        """Append model calls to the ledger."""
        ...

    def restore_fact(self, rowid: int, *, reason: str, at: str) -> MemoryRecord:
        """Make a retired fact current again: status active, no successor, no retirement."""
        ...


class AssistReads(Protocol):
    """What a tenant store adds for model-assisted memory."""

    def links_of(self, scope_key: str, memory_id: str) -> list[LinkRecord]:
        """Return the links from or to a memory of the scope, oldest first."""
        ...

    def slots(self, scope_key: str, limit: int) -> list[tuple[str, str]]:
        """Return the (subject, kind) slots that hold current facts in the scope, newest first."""
        ...

    def slot_texts(self, scope_key: str, subject_key: str, kind: str, statuses: Sequence[str]) -> list[SlotText]:
        """Return the texts of a slot's facts in these statuses (newest first)."""
        ...

    def get_job(self, job_id: str) -> JobRecord | None: ...

    def list_jobs(self, *, scope_keys: Sequence[str] | None, state: str | None, limit: int) -> list[JobRecord]:
        """Return jobs, newest first (of these scopes only, when given)."""
        ...

    def job_due(self, now: str) -> bool:
        """True when some job is due (a cheap read before a worker takes the write lock)."""
        ...

    def model_usage(self, since: str | None) -> list[UsageTotals]:
        """Return the tenant's model calls summed by purpose (since a time, when given)."""
        ...

    def model_calls(self, limit: int) -> list[ModelCall]:
        """Return the tenant's latest model calls, newest first."""
        ...
