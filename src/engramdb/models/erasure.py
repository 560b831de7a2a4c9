"""Forgetting: deleting one memory, or everything of one participant, so that no text is left."""

from __future__ import annotations

from pydantic import Field

from engramdb.contract.events import WireModel
from engramdb.models.base import ResponseModel, ScopeQuery


class ForgetRequest(WireModel):
    """Body of ``POST /v1/forget``: whose memories to erase."""

    participant_scope_hash: str = Field(pattern=r"^[0-9a-f]{64}$",
                                        description="the participant whose memories go (64 lower-hex)")
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
        "break the chain")


class DeleteMemoryQuery(ScopeQuery):
    """The scope of the memory to delete (fields the key does not fix)."""

    dry_run: bool = Field(False, description="answer what would go, delete nothing")


class MemoryDeleted(ResponseModel):
    """What deleting one memory took (or, with dryRun, would take)."""

    dry_run: bool = Field(description="true: nothing was deleted")
    memories: list[str] = Field(description="ids of the rows deleted: the episode, or every version of the fact")
