"""Operations of memory that ages and can be forgotten (declared like every other;
``operations.OPERATIONS`` lists them)."""

from __future__ import annotations

from typing import Any

from engramdb.models.aging import AgingRun, ArchiveRequest, JobList, MarkRequest, MemoryMarks, RestoreRequest
from engramdb.models.erasure import (
    DeleteMemoryQuery,
    ForgetRequest,
    Forgotten,
    MemoryDeleted,
    ParticipantExport,
    ParticipantQuery,
)
from engramdb.models.memories import MemoryView
from engramdb.models.operation import Cli, Operation

_EVENT_ID = {"event_id": "the episode's id (64 hex characters)"}
_FACT_ID = {"fact_id": "the fact's id (64 hex characters)"}

FORGET_PARTICIPANT = Operation(
    name="forget_participant",
    method="POST",
    path="/v1/forget",
    tag="erasure",
    output=Forgotten,
    permission="participant.forget",
    body=ForgetRequest,
    example={"participantScopeHash": "a" * 64, "dryRun": True},
    summary="Erase everything of one participant in the tenant (admin keys only); dryRun previews.",
    description="Memories (every version), tombstones, records, vectors, relationships and in-memory copies go "
    "in one transaction; audit entries about them lose their reasons but keep their place, so the chain still "
    "verifies; one content-free entry records the erasure. See docs/aging.md for what stays in WAL and backups.",
    cli=Cli(("forget",)),
)

EXPORT_PARTICIPANT = Operation(
    name="export_participant",
    method="GET",
    path="/v1/export",
    tag="erasure",
    output=ParticipantExport,
    permission="participant.export",
    query=ParticipantQuery,
    summary="Everything of one participant in the tenant (admin keys only), as the lines engram import reads.",
    description="Memories with every version, tombstones and records of every scope of the participant; never "
    "keys or the audit chain. `engram export --participant HASH` writes the same rows as a JSONL file.",
    cli=Cli(("participants", "export")),
)

DELETE_EPISODE = Operation(
    name="delete_episode",
    method="DELETE",
    path="/v1/episodes/{event_id}",
    tag="erasure",
    output=MemoryDeleted,
    permission="memory.write",
    query=DeleteMemoryQuery,
    path_params=_EVENT_ID,
    errors=(404,),
    summary="Delete an episode of the caller's scope without a trace (404 when the scope holds none); dryRun previews.",
    cli=Cli(("episodes", "delete"), done="deleted {event_id}"),
)

DELETE_FACT = Operation(
    name="delete_fact",
    method="DELETE",
    path="/v1/facts/{fact_id}",
    tag="erasure",
    output=MemoryDeleted,
    permission="memory.write",
    query=DeleteMemoryQuery,
    path_params=_FACT_ID,
    errors=(404,),
    summary="Delete a fact with every version of it, without a trace (404 when the scope holds none); dryRun previews.",
    cli=Cli(("facts", "delete"), id_prefix_of="list_facts", id_prefix_query={"includeHistory": True, "limit": 1000}),
)

MARK_FACT = Operation(
    name="mark_fact",
    method="POST",
    path="/v1/facts/{fact_id}/mark",
    tag="aging",
    output=MemoryMarks,
    permission="memory.mark",
    body=MarkRequest,
    path_params=_FACT_ID,
    errors=(404,),
    example={"pinned": True, "importance": 0.9},
    summary="Pin a fact or set its importance (a person's keys: host, reviewer, admin); pinned facts never archive.",
    cli=Cli(("facts", "mark"), id_prefix_of="list_facts", id_prefix_query={"includeHistory": True, "limit": 1000}),
)

MARK_EPISODE = Operation(
    name="mark_episode",
    method="POST",
    path="/v1/episodes/{event_id}/mark",
    tag="aging",
    output=MemoryMarks,
    permission="memory.mark",
    body=MarkRequest,
    path_params=_EVENT_ID,
    errors=(404,),
    example={"importance": 0.9},
    summary="Set an episode's importance (a person's keys); at the policy's protectImportance it is never archived.",
    cli=Cli(("episodes", "mark")),
)

ARCHIVE_FACT = Operation(
    name="archive_fact",
    method="POST",
    path="/v1/facts/{fact_id}/archive",
    tag="aging",
    output=MemoryView,
    permission="memory.mark",
    body=ArchiveRequest,
    path_params=_FACT_ID,
    errors=(404, 409),
    example={"reason": "the project ended"},
    summary="Archive a current fact now, saying why (a person's keys; audited); restore_fact brings it back.",
    description="The fact leaves recall as the aging sweep would take it out (status archived), whatever its "
    "strength, pin or importance: a person decided. 409 unless the fact is active.",
    cli=Cli(("facts", "archive"), id_prefix_of="list_facts", id_prefix_query={"includeHistory": True, "limit": 1000}),
)

ARCHIVE_EPISODE = Operation(
    name="archive_episode",
    method="POST",
    path="/v1/episodes/{event_id}/archive",
    tag="aging",
    output=MemoryView,
    permission="memory.mark",
    body=ArchiveRequest,
    path_params=_EVENT_ID,
    errors=(404, 409),
    example={"reason": "the project ended"},
    summary="Archive an episode now, saying why (a person's keys; audited); restore_episode brings it back.",
    cli=Cli(("episodes", "archive")),
)

RESTORE_FACT = Operation(
    name="restore_fact",
    method="POST",
    path="/v1/facts/{fact_id}/restore",
    tag="aging",
    output=MemoryView,
    permission="memory.write",
    body=RestoreRequest,
    path_params=_FACT_ID,
    errors=(404, 409),
    body_optional=True,
    example={"reason": "the user asked about it again"},
    summary="Bring an archived fact back into recall (audited); 409 unless it is archived or if its slot has a "
    "current value.",
    cli=Cli(("facts", "restore"), id_prefix_of="list_facts", id_prefix_query={"includeHistory": True, "limit": 1000}),
)

RESTORE_EPISODE = Operation(
    name="restore_episode",
    method="POST",
    path="/v1/episodes/{event_id}/restore",
    tag="aging",
    output=MemoryView,
    permission="memory.write",
    body=RestoreRequest,
    path_params=_EVENT_ID,
    errors=(404, 409),
    body_optional=True,
    example={"reason": "the user asked about it again"},
    summary="Bring an archived episode back into recall (audited); 409 unless it is archived.",
    cli=Cli(("episodes", "restore")),
)

LIST_JOBS = Operation(
    name="list_jobs",
    method="GET",
    path="/v1/jobs",
    tag="jobs",
    output=JobList,
    permission="jobs.read",
    summary="The server's background jobs: last run, next run, what each did and its last error.",
    cli=Cli(("jobs", "list")),
)

RUN_AGING = Operation(
    name="run_aging",
    method="POST",
    path="/v1/jobs/aging/run",
    tag="jobs",
    output=AgingRun,
    permission="jobs.run",
    summary="Run the aging sweep of the caller's tenant now (archive, retention); admin keys only.",
    cli=Cli(("jobs", "run-aging")),
)

AGING_OPERATIONS: tuple[Operation[Any], ...] = (
    FORGET_PARTICIPANT,
    EXPORT_PARTICIPANT,
    DELETE_EPISODE,
    DELETE_FACT,
    MARK_FACT,
    MARK_EPISODE,
    ARCHIVE_FACT,
    ARCHIVE_EPISODE,
    RESTORE_FACT,
    RESTORE_EPISODE,
    LIST_JOBS,
    RUN_AGING,
)
