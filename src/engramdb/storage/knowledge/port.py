"""What core and the stores exchange about the knowledge plane: rows, node references, and the
where-tree a search compiles (parsed by ``engramdb.core.knowledge.where``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from engramdb.storage.rows import CandidateFilter, ScopeColumns, Vector

Kind = Literal["string", "number", "boolean", "datetime"]
NodeKind = Literal["RECORD", "EPISODE", "MEMORY_FACT"]
Direction = Literal["out", "in", "any"]
KEY_CHARS = 200  # how much of a string the value index holds (equality also checks the rest)


@dataclass(frozen=True)
class Value:
    """One scalar of a property, typed for comparison (a list gives one per element)."""

    name: str
    kind: Kind
    text: str | None = None  # strings, and date-times in canonical form
    number: float | None = None  # numbers, and booleans as 1/0

    @property
    def key(self) -> str | None:
        return None if self.text is None else self.text[:KEY_CHARS]

    @property
    def folded(self) -> str | None:
        """The text case-folded, for $contains and friends (the same on both backends)."""
        return self.text.casefold() if self.text is not None and self.kind == "string" else None


@dataclass(frozen=True)
class NewRecord:
    """A record to store (or to merge into the one with the same ``merge_key``)."""

    scope: ScopeColumns
    record_id: str  # the id it gets if it is new (a merge keeps the stored record's)
    label: str
    properties_json: str  # canonical JSON of its own properties
    values: tuple[Value, ...]
    texts: tuple[tuple[str, str], ...]  # (property, text) to embed for semantic search
    merge_key: str | None
    origin: str
    at: str
    merge_identity: str | None = None  # the mergeBy names the key is made of (views.merged_by)


@dataclass(frozen=True)
class RecordRow:
    rowid: int
    record_id: str
    scope_key: str
    label: str
    properties_json: str
    origin: str
    version: int
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class NodeRef:
    """A node of the graph: a record, an episode or a fact, by its stored rowid."""

    kind: NodeKind
    rowid: int


@dataclass(frozen=True)
class Edge:
    rowid: int
    type: str
    source: NodeRef
    target: NodeRef
    properties_json: str
    created_at: str


@dataclass(frozen=True)
class EdgeKey:
    """Where a page of a node's relationships ends: the last one's record time and rowid."""

    created_at: str
    rowid: int


@dataclass(frozen=True)
class HistoryRow:
    version: int
    properties_json: str
    replaced_at: str


@dataclass(frozen=True)
class Order:
    name: str  # a property, or $id / $createdAt / $updatedAt
    descending: bool


@dataclass(frozen=True)
class Aggregate:
    alias: str
    fn: Literal["count", "sum", "avg", "min", "max"]
    name: str | None  # the numeric property (None for count)


# -- the where-tree ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Compare:
    """A property (or $id/$createdAt/$updatedAt) compared with one value."""

    name: str
    op: str  # $eq $ne $gt $gte $lt $lte $contains $startsWith $endsWith
    value: Value


@dataclass(frozen=True)
class Member:
    """A property whose value is (``negated``: is not) one of ``values``."""

    name: str
    values: tuple[Value, ...]
    negated: bool


@dataclass(frozen=True)
class Exists:
    name: str
    present: bool


@dataclass(frozen=True)
class Component:
    """A part of a date-time property (year, month, ...) compared with a whole number."""

    name: str
    part: str  # year month day hour minute second
    op: str
    number: int


@dataclass(frozen=True)
class Related:
    """A related record of ``label`` (through ``type`` if named, in ``direction``) matching ``where``."""

    label: str
    type: str | None
    direction: Direction
    where: Node


@dataclass(frozen=True)
class All:
    items: tuple[Node, ...] = ()


@dataclass(frozen=True)
class AnyOf:
    items: tuple[Node, ...] = ()


@dataclass(frozen=True)
class Not:
    item: Node


Node = Compare | Member | Exists | Component | Related | All | AnyOf | Not


@dataclass(frozen=True)
class Budget:
    """What one search may ask for, below what either backend plans quickly (docs/knowledge.md
    has the measurements). The where-language counts it as it parses (``keys`` to ``related``),
    the search its order and aggregates, the store the parameters it binds: a search past any
    limit is refused (422, naming the limit and the place) before a statement runs."""

    keys: int = 100  # every key of every object of a where, at any depth, operators' included
    values: int = 1_000  # $in / $nin values, all lists of a where together
    nesting: int = 8  # where objects inside one another: $and / $or elements, $not, related labels
    related: int = 4  # related labels below the root
    order: int = 8  # orderBy keys
    aggregates: int = 16
    parameters: int = 10_000  # bound in one statement (SQLite takes 32,766, PostgreSQL 65,535)


BUDGET = Budget()


@dataclass(frozen=True)
class Query:
    """A search: root labels (empty: any), the where-tree, order and page."""

    labels: tuple[str, ...] = ()
    where: Node = field(default_factory=All)
    order: tuple[Order, ...] = ()
    limit: int = 100
    skip: int = 0


class KnowledgeWrites(Protocol):
    """The knowledge plane's writes, inside a transaction."""

    def insert_records(self, records: Sequence[NewRecord]) -> dict[str, RecordRow]:
        """Insert records with their values and texts; the rows by record id (one whose label and
        merge key exist is left out: the constraint held)."""
        ...

    def merged_many(self, scope_key: str, label: str, merge_keys: Sequence[str]) -> dict[str, RecordRow]:
        """The records of ``label`` with these merge keys, by merge key."""
        ...

    def locked_record(self, scope_key: str, record_id: str) -> RecordRow | None:
        """A record by id, as this transaction sees it."""
        ...

    def replace_properties(self, row: RecordRow, record: NewRecord) -> RecordRow:
        """Give ``row`` new properties (the old ones go to its history) and ``record``'s merge key; return it."""
        ...

    def merge_state(self, rowid: int) -> tuple[str | None, str | None]:
        """A record's merge key and how it is made (``NewRecord.merge_identity``)."""
        ...

    def delete_records(self, scope_key: str, rowids: Sequence[int]) -> tuple[int, int]:
        """Delete records with their values, vectors, history and relationships: (records, edges)."""
        ...

    def holds(self, scope_key: str, node: NodeRef) -> bool:
        """Whether ``node`` is still in ``scope_key``, held so until the transaction ends."""
        ...

    def link(
        self, scope_key: str, type: str, source: NodeRef, target: NodeRef, properties_json: str, at: str
    ) -> tuple[Edge, bool]:
        """Create a relationship (or return the one that exists): (edge, created)."""
        ...

    def link_many(self, scope_key: str, links: Sequence[tuple[str, NodeRef, NodeRef]], at: str) -> list[Edge]:
        """Create relationships (type, source, target) without properties; those created."""
        ...

    def unlink(self, scope_key: str, type: str, source: NodeRef, target: NodeRef) -> bool: ...


class KnowledgeReads(Protocol):
    """The knowledge plane's reads."""

    def get_record(self, scope_key: str, record_id: str) -> RecordRow | None: ...

    def record_rows(self, scope_key: str, rowids: Sequence[int]) -> dict[int, RecordRow]: ...

    def record_sizes(self, scope_key: str, rowids: Sequence[int]) -> dict[int, int]:
        """The UTF-8 bytes of each record's properties as stored, without reading them into the process."""
        ...

    def record_keys(self, scope_key: str, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """The public id and creation time of the scope's records among ``rowids``, without their properties."""
        ...

    def search_record_sizes(self, scope_key: str, query: Query) -> list[tuple[int, int]]:
        """The records a query matches, a page of them in its order, each as (rowid, bytes of its properties):
        the properties are read by ``record_rows`` for those an answer has room for."""
        ...

    def count_records(self, scope_key: str, query: Query) -> int: ...

    def aggregate_records(
        self, scope_key: str, query: Query, group_by: Sequence[str], aggregates: Sequence[Aggregate]
    ) -> list[tuple[tuple[object, ...], tuple[float | None, ...]]]:
        """Rows of (group values, aggregate values) over the records the query matches."""
        ...

    def record_values(self, rowids: Sequence[int]) -> dict[int, list[Value]]: ...

    def edges(
        self, scope_key: str, nodes: Sequence[NodeRef], types: Sequence[str] = (), limit: int | None = None
    ) -> list[Edge]:
        """Relationships touching any of ``nodes`` (either end), in write order (the first ``limit``)."""
        ...

    def node_edges(
        self, scope_key: str, node: NodeRef, *, type: str | None, direction: str, after: EdgeKey | None, limit: int
    ) -> list[Edge]:
        """A page of one node's relationships (``direction``: out, in or both), oldest first."""
        ...

    def record_history(self, rowid: int, *, after: int, limit: int) -> list[HistoryRow]:
        """A page of a record's earlier versions: those after version ``after``, oldest first."""
        ...

    def history_sizes(self, rowid: int, *, after: int, limit: int) -> list[tuple[int, int]]:
        """The page ``record_history`` answers, as (version, bytes of its properties)."""
        ...

    def admitted(self, scope_key: str, rowids: Sequence[int], filt: CandidateFilter) -> list[int]:
        """The memories among ``rowids`` that a read with ``filt`` may see (recall's filter)."""
        ...

    def node_rowid(self, scope_key: str, kind: str, node_id: str) -> int | None:
        """The stored rowid of a record id, an episode's eventId or a fact's factId in the scope."""
        ...

    def node_ids(self, nodes: Sequence[NodeRef]) -> dict[NodeRef, str]:
        """The public ids of nodes (record ids, eventIds, factIds)."""
        ...

    def schema_summary(self, scope_key: str) -> list[tuple[str, int, list[tuple[str, str, int]]]]:
        """Per label: (label, records, [(property, kind, records having it)])."""
        ...

    def edge_summary(self, scope_key: str) -> list[tuple[str, str, str, int]]:
        """(source label, type, target label, count) of the scope's relationships between records."""
        ...

    def record_vector_candidates(
        self, scope_key: str, vector: Vector, query: Query, name: str | None, limit: int, model: str
    ) -> list[tuple[int, float]]:
        """(record rowid, best cosine) over the ready vectors ``model`` made of the records ``query`` matches."""
        ...

    def record_embedding_jobs(self, limit: int, now: str) -> list[tuple[int, str, int]]:
        """(vector id, text, attempts) of record texts whose vector is pending or due for a retry."""
        ...

    def save_record_embeddings(self, ids: Sequence[int], texts: Sequence[str], vectors: Vector, model: str) -> None:
        """Store the vectors of the texts the jobs named; a row whose text changed meanwhile stays due."""
        ...

    def record_record_embedding_failure(self, ids: Sequence[int], error: str, next_at: Sequence[str]) -> None: ...
