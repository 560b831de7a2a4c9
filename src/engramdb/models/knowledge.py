"""The knowledge plane's shapes: records under UPPER_CASE labels, relationships, searches."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from engramdb.contract.events import ScopeFields, WireModel
from engramdb.models.base import QueryModel, ResponseModel, ScopeQuery

NodeKind = Literal["RECORD", "EPISODE", "MEMORY_FACT"]
_SCOPE = "scope fields the key does not fix"


class RecordWrite(WireModel):
    """Body of ``POST /v1/records``: one record (or several of one label) with nested children."""

    label: str = Field(description="the record's label, UPPER_CASE (e.g. SESSION, DECISION, TASK, ENTITY)")
    data: dict[str, Any] | list[dict[str, Any]] = Field(
        description="its properties (camelCase names: strings, numbers, booleans, date-times, lists of them); "
        "an object or a list of objects under a key is a child record, labelled by the key (DECISION, or "
        "ownerInfo -> OWNER_INFO) and linked by HAS_<LABEL>. A list here writes several records."
    )
    merge_by: list[str] | None = Field(
        None,
        max_length=16,
        description="property names that identify a record of this label: one with the same values is updated, "
        "not duplicated (children without them are identified by their content under their parent)",
    )
    scope: ScopeFields | None = Field(None, description=_SCOPE)


class RecordChange(WireModel):
    """Body of ``PATCH /v1/records/{record_id}``: properties to set (null removes one)."""

    properties: dict[str, Any] = Field(description="properties to set; a null value removes the property")
    scope: ScopeFields | None = Field(None, description=_SCOPE)


class RecordView(ResponseModel):
    """A stored record."""

    id: str = Field(description="the record's id (made by the server)")
    label: str = Field(description="its UPPER_CASE label")
    properties: dict[str, Any] = Field(description="its properties, as written")
    origin: str = Field(description="stated (the host wrote it) or derived (a model did)")
    version: int = Field(description="1, then one more at each change of its properties")
    created_at: str = Field(description="record time it was created")
    updated_at: str = Field(description="record time its properties last changed")
    score: float | None = Field(None, description="semantic search: the cosine of its best-matching text")


class RecordsWritten(ResponseModel):
    """What a record write did."""

    records: list[RecordView] = Field(description="the records written at the top level, in order")
    created: int = Field(description="records created, children included")
    updated: int = Field(description="records whose properties changed (merged by mergeBy or content)")
    unchanged: int = Field(description="records already stored as they are")
    relationships: int = Field(description="relationships created between parents and children")


class RecordHistory(ResponseModel):
    """A page of a record's versions, oldest first; the last page ends with the current one."""

    versions: list[RecordVersion] = Field(description="the versions, oldest first")
    next_cursor: str | None = Field(
        None,
        description="pass as ?cursor= for the next page; absent on the last (a page also ends before limit "
        "at the answer's size limit, 4,000,000 bytes of properties)",
    )


class RecordVersion(ResponseModel):
    version: int = Field(description="the version number")
    properties: dict[str, Any] = Field(description="the properties in that version")
    until: str | None = Field(None, description="record time it was replaced (absent for the current version)")


class NodeSpec(WireModel):
    """One end of a relationship: a record, an episode or a fact, by its id (a bare id: a record)."""

    id: str = Field(min_length=1, max_length=256, description="a record id, an episode's eventId or a fact's factId")
    kind: NodeKind = Field("RECORD", description="RECORD (default), EPISODE or MEMORY_FACT")

    @model_validator(mode="before")
    @classmethod
    def _bare_id(cls, value: Any) -> Any:
        return {"id": value} if isinstance(value, str) else value  # an id alone names a record


class LinkRequest(WireModel):
    """Body of ``POST /v1/relationships``: a typed, directed relationship in one scope."""

    source: NodeSpec = Field(description="where the relationship starts")
    target: NodeSpec = Field(description="where it ends")
    type: str = Field(description="UPPER_CASE, e.g. DEPENDS_ON, MENTIONS, PRODUCES, HAS_TASK")
    properties: dict[str, Any] = Field(default_factory=dict, description="optional properties of the relationship")
    scope: ScopeFields | None = Field(None, description=_SCOPE)


class UnlinkRequest(WireModel):
    """Body of ``POST /v1/relationships/delete``."""

    source: NodeSpec = Field(description="where the relationship starts")
    target: NodeSpec = Field(description="where it ends")
    type: str = Field(description="its UPPER_CASE type")
    scope: ScopeFields | None = Field(None, description=_SCOPE)


class NodeView(ResponseModel):
    kind: NodeKind = Field(description="RECORD, EPISODE or MEMORY_FACT")
    id: str = Field(description="its id")


class RelationshipView(ResponseModel):
    """A relationship between two nodes of one scope."""

    type: str = Field(description="its UPPER_CASE type")
    source: NodeView = Field(description="where it starts")
    target: NodeView = Field(description="where it ends")
    properties: dict[str, Any] = Field(default_factory=dict, description="its properties")
    created_at: str = Field(description="record time it was created")


class RelationshipList(ResponseModel):
    """A page of a node's relationships, oldest first."""

    relationships: list[RelationshipView] = Field(description="the relationships, oldest first")
    next_cursor: str | None = Field(
        None,
        description="pass as ?cursor= for the next page; absent on the last (a page also ends before limit at the "
        "answer's size limit, 4,000,000 bytes of properties)",
    )


class Unlinked(ResponseModel):
    deleted: bool = Field(description="true when a relationship was removed (false: there was none)")


class AggregateSpec(WireModel):
    fn: Literal["count", "sum", "avg", "min", "max"] = Field(description="count, or sum/avg/min/max of a number")
    field: str | None = Field(None, description="the numeric property (not for count)")


class RecordSearch(WireModel):
    """Body of ``POST /v1/records/search``: a where-query (docs/knowledge.md), or a semantic search."""

    labels: list[str] = Field(default_factory=list, max_length=32, description="only records of these labels")
    where: dict[str, Any] = Field(default_factory=dict, description="conditions (docs/knowledge.md), nested labels too")
    order_by: dict[str, Literal["asc", "desc"]] = Field(
        default_factory=dict, description="property (or $createdAt, $updatedAt, $id) -> asc/desc; default newest first"
    )
    limit: int = Field(100, ge=1, le=1000, description="at most this many records (1-1000)")
    skip: int = Field(0, ge=0, le=1_000_000, description="skip this many first")
    query: str | None = Field(
        None, min_length=1, max_length=4_000, description="semantic search: rank the matching records by meaning"
    )
    property: str | None = Field(None, description="semantic search over this text property only")
    aggregate: dict[str, AggregateSpec] | None = Field(
        None, min_length=1, description="alias -> {fn, field}: answer aggregates instead of records (at least one)"
    )
    group_by: list[str] = Field(
        default_factory=list,
        max_length=3,
        description="aggregate per value of these properties (limit and skip page the groups)",
    )
    count: bool = Field(
        False, description="also count every match (total): a pass over all of them, where a page stops early"
    )
    scope: ScopeFields | None = Field(None, description=_SCOPE)


class AggregateRow(ResponseModel):
    group: dict[str, Any] = Field(description="the grouping properties' values (empty without groupBy)")
    values: dict[str, float | int | None] = Field(description="alias -> the aggregate's value")


class RecordSearchResult(ResponseModel):
    """Records matching a search (or its aggregates)."""

    records: list[RecordView] = Field(description="the records, in order")
    total: int | None = Field(
        None,
        description="how many records match in all (limit and skip aside): present when count was asked, "
        "or when this page holds the last match",
    )
    aggregates: list[AggregateRow] | None = Field(
        None,
        description="present when the search asked for aggregates; with groupBy, one row per group in the "
        "groups' order (a group without the property last), paged by limit and skip",
    )
    more_groups: bool | None = Field(
        None, description="with groupBy: whether more groups follow this page (ask again with skip + limit)"
    )
    truncated: bool = Field(
        False,
        description="true when the page stopped before limit at the answer's size limit (4,000,000 bytes of "
        "properties): more may follow; ask again with skip + the records answered",
    )


class DeleteRequest(WireModel):
    """Body of ``POST /v1/records/delete``: delete what a where matches (preview with dryRun)."""

    labels: list[str] = Field(default_factory=list, max_length=32, description="only records of these labels")
    where: dict[str, Any] = Field(default_factory=dict, description="conditions (docs/knowledge.md)")
    dry_run: bool = Field(False, description="answer what would go, delete nothing")
    scope: ScopeFields | None = Field(None, description=_SCOPE)


class DeleteQuery(ScopeQuery):
    dry_run: bool = Field(False, description="answer what would go, delete nothing")
    cascade: bool = Field(False, description="also delete the records nested under it (HAS_ children), recursively")


class Deleted(ResponseModel):
    """What a delete did (or, with dryRun, would do)."""

    dry_run: bool = Field(description="true: nothing was deleted")
    records: list[str] = Field(description="ids of the records deleted (or that would be)")
    relationships: int = Field(description="relationships removed with them")


class SchemaProperty(ResponseModel):
    name: str = Field(description="the property name")
    kind: str = Field(description="string, number, boolean or datetime")
    records: int = Field(description="how many records of the label have it")


class SchemaEdge(ResponseModel):
    type: str = Field(description="relationship type")
    target: str = Field(description="the label at its end")
    count: int = Field(description="how many")


class SchemaLabel(ResponseModel):
    label: str = Field(description="the label")
    records: int = Field(description="records of this label in the scope")
    properties: list[SchemaProperty] = Field(description="its properties and their kinds")
    relationships: list[SchemaEdge] = Field(description="relationships from records of this label")


class KnowledgeSchema(ResponseModel):
    """What a scope's records look like: labels, properties, relationships."""

    labels: list[SchemaLabel] = Field(description="one entry per label, alphabetical")


class ExportRequest(WireModel):
    """Body of ``POST /v1/records/export``: the records a where matches, and what they link to."""

    labels: list[str] = Field(default_factory=list, max_length=32, description="only records of these labels")
    where: dict[str, Any] = Field(default_factory=dict, description="conditions (docs/knowledge.md)")
    depth: int = Field(1, ge=0, le=3, description="follow relationships this many hops out (0-3)")
    limit: int = Field(1000, ge=1, le=1_000, description="at most this many matching records (1 to 1,000)")
    scope: ScopeFields | None = Field(None, description=_SCOPE)


class GraphExport(ResponseModel):
    """A subgraph: records and the relationships between the nodes it holds."""

    records: list[RecordView] = Field(description="the records: the matches, then what they link to")
    relationships: list[RelationshipView] = Field(description="relationships among them (and to memories)")
    truncated: bool = Field(
        False,
        description="true when the export stopped at its relationship limit (2,000) or its size limit "
        "(4,000,000 bytes of properties, its relationships' included; a hop that would pass it is left out "
        "whole): ask with a narrower where, a smaller limit or a smaller depth for the whole subgraph",
    )


class RecordQuery(ScopeQuery):
    """Scope fields of a read of one record."""


class HistoryQuery(RecordQuery):
    """Which page of a record's versions to read."""

    cursor: str | None = Field(None, max_length=200, description="nextCursor of the previous page")
    limit: int = Field(100, ge=1, le=1000, description="at most this many versions (1-1000)")


class RelationshipQuery(ScopeQuery):
    """Which node's relationships to list."""

    id: str = Field(
        min_length=1, max_length=256, description="the node: a record id, an episode's eventId or a fact's factId"
    )
    kind: NodeKind = Field("RECORD", description="what the id names: RECORD (default), EPISODE or MEMORY_FACT")
    type: str | None = Field(None, max_length=64, description="only relationships of this UPPER_CASE type")
    direction: Literal["out", "in", "both"] = Field("both", description="out: from the node; in: to it; both (default)")
    cursor: str | None = Field(None, max_length=200, description="nextCursor of the previous page")
    limit: int = Field(100, ge=1, le=1000, description="at most this many relationships (1-1000)")


class SchemaQuery(ScopeQuery):
    """Which labels to summarise."""

    label: str | None = Field(None, max_length=64, description="only this label (UPPER_CASE)")


class RecordOptions(QueryModel):
    """How a record is being written."""

    origin: Literal["stated", "derived"] | None = Field(
        None, description="derived when a model wrote it (default stated)"
    )


RecordHistory.model_rebuild()
