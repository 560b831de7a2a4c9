"""Operations of memory that ages and can be forgotten (declared like every other;
``operations.OPERATIONS`` lists them)."""

from __future__ import annotations

from typing import Any

from engramdb.models.erasure import DeleteMemoryQuery, ForgetRequest, Forgotten, MemoryDeleted
from engramdb.models.operation import Cli, Operation

_EVENT_ID = {"event_id": "the episode's id (64 hex characters)"}
_FACT_ID = {"fact_id": "the fact's id (64 hex characters)"}

FORGET_PARTICIPANT = Operation(
    name="forget_participant", method="POST", path="/v1/forget", tag="erasure", output=Forgotten,
    permission="participant.forget", body=ForgetRequest, example={"participantScopeHash": "a" * 64, "dryRun": True},
    summary="Erase everything of one participant in the tenant (admin keys only); dryRun previews.",
    description="Memories (every version), tombstones, records, vectors, relationships and in-memory copies go "
    "in one transaction; audit entries about them lose their reasons but keep their place, so the chain still "
    "verifies; one content-free entry records the erasure. See docs/aging.md for what stays in WAL and backups.",
    cli=Cli(("forget",)),
)  # fmt: skip

DELETE_EPISODE = Operation(
    name="delete_episode", method="DELETE", path="/v1/episodes/{event_id}", tag="erasure", output=MemoryDeleted,
    permission="memory.write", query=DeleteMemoryQuery, path_params=_EVENT_ID, errors=(404,),
    summary="Delete an episode of the caller's scope without a trace (404 when the scope holds none); dryRun previews.",
    cli=Cli(("episodes", "delete"), done="deleted {event_id}"),
)  # fmt: skip

DELETE_FACT = Operation(
    name="delete_fact", method="DELETE", path="/v1/facts/{fact_id}", tag="erasure", output=MemoryDeleted,
    permission="memory.write", query=DeleteMemoryQuery, path_params=_FACT_ID, errors=(404,),
    summary="Delete a fact with every version of it, without a trace (404 when the scope holds none); dryRun previews.",
    cli=Cli(("facts", "delete"), id_prefix_of="list_facts", id_prefix_query={"includeHistory": True, "limit": 1000}),
)  # fmt: skip

AGING_OPERATIONS: tuple[Operation[Any], ...] = (FORGET_PARTICIPANT, DELETE_EPISODE, DELETE_FACT)
