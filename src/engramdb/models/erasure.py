"""Forgetting: deleting one memory, or everything of one participant, so that no text is left."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from engramdb.contract.events import WireModel
from engramdb.models.base import QueryModel, ResponseModel, ScopeQuery


class ForgetRequest(WireModel):
    """Body of ``POST /v1/forget``: whose memories to erase."""

    participant_scope_hash: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="the participant whose memories go (64 lower-hex)"
    )
    dry_run: bool = Field(False, description="answer what would go, erase nothing")


class Forgotten(ResponseModel):
    """What forgetting a participant took (or, with dryRun, would take)."""

    dry_run: bool = Field(description="true: nothing was erased")
    scopes: int = Field(description="scopes of the participant")
    memories: int = Field(description="episodes and facts (every version) erased")
    records: int = Field(description="knowledge records erased")
    relationships: int = Field(description="relationships erased")
    tombstones: int = Field(description="tombstones erased (with their reasons)")
    audit_reasons_erased: int = Field(description="audit entries whose reason text was erased (the entries stay)")
    audit_reasons_kept: int = Field(
        description="audit reasons written before reasons were chained by digest: kept, erasing them would "
        "break the chain"
    )


class DeleteMemoryQuery(ScopeQuery):
    """The scope of the memory to delete (fields the key does not fix)."""

    dry_run: bool = Field(False, description="answer what would go, delete nothing")


class MemoryDeleted(ResponseModel):
    """What deleting one memory took (or, with dryRun, would take)."""

    dry_run: bool = Field(description="true: nothing was deleted")
    memories: list[str] = Field(description="ids of the rows deleted: the episode, or every version of the fact")


class ParticipantQuery(QueryModel):
    """Whose data to export."""

    # Optional in the model so that a key that may not export hears 403 before it hears 422.
    participant_scope_hash: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$", description="the participant (64 lower-hex; required)"
    )


class ExportLine(ResponseModel):
    """One line of an export, as `engram export` writes it and `engram import` reads it."""

    table: str = Field(description="memories, tombstones, records, record_values, record_history, ...")
    row: dict[str, Any] = Field(description="the row's columns")


class ParticipantExport(ResponseModel):
    """Everything of one participant in the tenant: the lines of an export `engram import` reads."""

    format: str = Field("engramdb-export", description="always engramdb-export")
    version: int = Field(1, description="the export format's version")
    tenant: str = Field(description="the tenant exported from")
    participant_scope_hash: str = Field(description="whose data this is")
    exported_at: str = Field(description="when")
    rows: list[ExportLine] = Field(description="memories (every version), tombstones and records of the participant")
