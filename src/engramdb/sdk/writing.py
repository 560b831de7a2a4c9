"""What a session queues for a write: the complete event under a resolved scope, or, while the
server has not hashed the participant yet, the write body with the raw ``userId``.

A host that names its user by its own id (``HostContext.participant_id``) needs the server for the
participantScopeHash: the tenant's salt never leaves it. A turn taken while the server is away is
not lost for that: its body is queued with ``userId`` in the host's outbox folder (its disk, no
other place), and the server hashes the id when it takes the write, in the same scope the hash
would have named. An episode's eventId does not cover the participant, so it is known at once and
a retry still finds the same episode; a fact's factId does, so the server computes it and the
outbox keys the entry by a digest of its body.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.contract.events import Episode, Fact, Scope
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.sdk import operations as op
from engramdb.sdk.host import Unresolved
from engramdb.sdk.outbox import Outbox, SessionState

Target = Scope | Unresolved
UNRESOLVED_FACT = "unresolved:"  # the outbox key of a fact whose factId the server will compute


@dataclass(frozen=True)
class Prepared:
    """A write ready for the outbox: its key, and the event (resolved) or the body (unresolved)."""

    key: str  # the eventId or factId; for an unresolved fact, UNRESOLVED_FACT + a digest of its body
    event: Episode | Fact | None  # the complete contract event, when the scope is resolved
    body: dict[str, Any] | None  # the write body naming the participant by userId, when it is not

    @property
    def memory_id(self) -> str | None:
        """The id the memory will have, when the host can know it now."""
        return None if self.key.startswith(UNRESOLVED_FACT) else self.key


def _unresolved_body(write: EpisodeWrite | FactWrite, target: Unresolved) -> dict[str, Any]:
    body = {**write.model_dump(by_alias=True, exclude_none=True), **target.wire()}
    op.as_model(type(write), body)  # the server's own check, now: a malformed id is refused here, not buried later
    return body


def prepare_episode(target: Target, body: Mapping[str, object]) -> Prepared:
    """The episode of ``body`` under ``target``; InvalidInputError if the body is not one."""
    write = op.as_model(EpisodeWrite, dict(body))
    if isinstance(target, Scope):
        event = write.to_event(target)
        return Prepared(event.event_id, event, None)
    event_id = write.id_under(target.agent_id, target.profile_id)
    return Prepared(event_id, None, {**_unresolved_body(write, target), "eventId": event_id})


def prepare_fact(target: Target, body: Mapping[str, object]) -> Prepared:
    """The fact of ``body`` under ``target``; InvalidInputError if the body is not one."""
    write = op.as_model(FactWrite, dict(body))
    if isinstance(target, Scope):
        event = write.to_event(target)
        return Prepared(event.fact_id, event, None)
    unresolved = _unresolved_body(write, target)
    return Prepared(UNRESOLVED_FACT + sha256_hex(canonical_json(unresolved)), None, unresolved)


def queue_episode(
    outbox: Outbox, prepared: Prepared, *, session: SessionState | None = None, extract: bool = False
) -> bool:
    """Append the episode to the outbox (OutboxFullError when it is full); False if already pending."""
    if isinstance(prepared.event, Episode):
        return outbox.append_episode(prepared.event, session=session, extract=extract)
    assert prepared.body is not None
    return outbox.append_unresolved("episode", prepared.key, prepared.body, session=session, extract=extract)


def queue_fact(outbox: Outbox, prepared: Prepared, *, origin: str = "stated") -> bool:
    """Append the fact to the outbox (OutboxFullError when it is full); False if already pending."""
    if isinstance(prepared.event, Fact):
        return outbox.append_fact(prepared.event, origin=origin)
    assert prepared.body is not None
    return outbox.append_unresolved("fact", prepared.key, prepared.body, origin=origin)
