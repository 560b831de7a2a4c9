"""Entity links: ENTITY records and MENTIONS relationships made without a model, and recall's hop
through them.

Write side (``link_entities``, on the write path in the episode's own transaction, so the links
exist the moment the write returns): the entities ``core/entities.py`` finds in what the author
wrote (an episode's summary and user text, a fact's text) become ``ENTITY`` records of the
memory's scope, one per case-folded name (``{"name", "key"}``, origin ``derived``: the server
read them, the host did not state them), and each memory ``MENTIONS`` the entities it names.
Every new record and every link is audited in the same transaction with its state's digest, so
the audit's coverage check holds them as it holds the knowledge plane's own writes.

Recall side (``entity_lift``): the first ``entity_seeds`` rows of the fused ranking lend
``entity_weight`` times their score to every other memory that mentions one of their entities,
times how specific the entity is in the scope (``log(N / mentions) / log(N)``; an entity
mentioned by more than ``entity_max_share`` of the scope's memories, and more than ``MIN_CAP`` times,
lends nothing). A question
about A so finds the memory about B that names A's entity. Rows found only this way join the
candidates if the recall's lifecycle filter admits them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from engramdb.audit_chain.states import record_digest, relationship_digest, relationship_id
from engramdb.config import RetrievalSettings
from engramdb.contract.canonical import canonical_json
from engramdb.core import fusion
from engramdb.core.auth import Caller
from engramdb.core.entities import extract
from engramdb.core.knowledge.views import merge_key, new_record_id
from engramdb.storage.knowledge.port import Edge, NewRecord, NodeKind, NodeRef, RecordRow, Value
from engramdb.storage.port import AuditDraft, CandidateFilter, TenantStore, Transaction
from engramdb.storage.rows import ScopeColumns

ENTITY, MENTIONS = "ENTITY", "MENTIONS"
MIN_CAP = 4  # in a small scope an entity may be named this many times and still be followed


@dataclass(frozen=True)
class Written:
    """A memory just written: where it is stored, its scope, and the text its author wrote."""

    kind: NodeKind  # EPISODE or MEMORY_FACT
    rowid: int
    memory_id: str
    scope: ScopeColumns
    text: str


def author_text(summary: str, user_text: str) -> str:
    """What a person said in an episode (its summary and user text, each once)."""
    return summary if not user_text or user_text.strip() == summary.strip() else f"{summary}\n{user_text}"


def link_entities(tx: Transaction, caller: Caller, written: Sequence[Written], at: str) -> int:
    """Create the ENTITY records and MENTIONS relationships of ``written``; return the links made.

    Each new record is audited with its state's digest and each link with its own, as the
    knowledge plane's writes are, so ``engram audit verify`` holds them like any other row."""
    by_scope: dict[str, list[tuple[Written, dict[str, str]]]] = defaultdict(list)
    for item in written:
        names = extract(item.text)
        if names:
            by_scope[item.scope.scope_key].append((item, names))
    made = 0
    for scope_key, items in by_scope.items():
        entity, audits = _entities(tx, caller, items, at)
        links, ends = [], {}
        for item, names in items:
            ends[(item.kind, item.rowid)] = item.memory_id
            node = NodeRef(item.kind, item.rowid)
            links += [(MENTIONS, node, NodeRef("RECORD", entity[k].rowid)) for k in names if k in entity]
        ids = {row.rowid: row.record_id for row in entity.values()}
        created = tx.link_many(scope_key, links, at) if links else []
        made += len(created)
        audits += [_link_audit(caller, scope_key, e, ends[(e.source.kind, e.source.rowid)], ids) for e in created]
        tx.audit_many(audits)
    return made


def _entities(
    tx: Transaction, caller: Caller, items: Sequence[tuple[Written, dict[str, str]]], at: str
) -> tuple[dict[str, RecordRow], list[AuditDraft]]:
    """The ENTITY records the items name (by case-folded key), the missing ones created and audited."""
    scope = items[0][0].scope
    spelled: dict[str, str] = {}
    for _, names in items:
        for key, name in names.items():
            spelled.setdefault(key, name)
    digests = {key: merge_key(ENTITY, {"key": key}) for key in spelled}
    rows = tx.merged_many(scope.scope_key, ENTITY, list(digests.values()))
    fresh = [_record(scope, key, spelled[key], digests[key], at) for key in spelled if digests[key] not in rows]
    inserted = tx.insert_records(fresh) if fresh else {}
    audits = [
        caller.audit(
            "record.create",
            target_kind="RECORD",
            target_id=row.record_id,
            scope_key=row.scope_key,
            after_digest=record_digest(row),
        )
        for row in inserted.values()
    ]
    by_digest = {
        **rows,
        **{r.merge_key: inserted[r.record_id] for r in fresh if r.record_id in inserted and r.merge_key},
    }
    return {key: by_digest[d] for key, d in digests.items() if d in by_digest}, audits


def _link_audit(caller: Caller, scope_key: str, edge: Edge, memory_id: str, ids: dict[int, str]) -> AuditDraft:
    """The audit entry of a MENTIONS link made: the relationship's id and its state's digest."""
    entity_id = ids[edge.target.rowid]
    return caller.audit(
        "relationship.create",
        target_kind="RELATIONSHIP",
        scope_key=scope_key,
        target_id=relationship_id(memory_id, edge.type, entity_id),
        after_digest=relationship_digest(
            scope_key, edge.type, (edge.source.kind, memory_id), ("RECORD", entity_id), edge.properties_json
        ),
    )


def _record(scope: ScopeColumns, key: str, name: str, digest: str, at: str) -> NewRecord:
    """An ENTITY record (never embedded: a name is matched by its key, not by meaning)."""
    properties = {"name": name, "key": key}
    return NewRecord(
        scope=scope,
        record_id=new_record_id(),
        label=ENTITY,
        properties_json=canonical_json(properties),
        values=(Value("name", "string", text=name), Value("key", "string", text=key)),
        texts=(),
        merge_key=digest,
        origin="derived",
        at=at,
    )


def entity_lift(
    store: TenantStore,
    scope_key: str,
    seeds: Sequence[tuple[int, str, float]],
    size: int,
    settings: RetrievalSettings,
) -> dict[int, float]:
    """What each memory linked to a seed (rowid, source, score) through a shared entity gains."""
    if settings.entity_weight <= 0 or not seeds or size < 2:
        return {}
    nodes = [NodeRef("EPISODE" if source == "EPISODE" else "MEMORY_FACT", rowid) for rowid, source, _ in seeds]
    seed_of = {node: score for node, (_, _, score) in zip(nodes, seeds, strict=True)}
    named: dict[int, list[float]] = defaultdict(list)  # entity rowid -> scores of the seeds naming it
    for edge in store.edges(scope_key, nodes, (MENTIONS,)):
        if edge.source in seed_of and edge.target.kind == "RECORD":
            named[edge.target.rowid].append(seed_of[edge.source])
    if not named:
        return {}
    mentions: dict[int, list[int]] = defaultdict(list)  # entity rowid -> memories naming it
    for edge in store.edges(scope_key, [NodeRef("RECORD", r) for r in named], (MENTIONS,)):
        if edge.target.kind == "RECORD" and edge.source.kind != "RECORD":
            mentions[edge.target.rowid].append(edge.source.rowid)
    cap, scale = max(settings.entity_max_share * size, MIN_CAP), math.log(size)
    lift: dict[int, float] = defaultdict(float)
    for entity, memories in mentions.items():
        if len(memories) < 2 or len(memories) > cap:
            continue
        specific = math.log(size / len(memories)) / scale
        lent = settings.entity_weight * max(named[entity]) * specific
        for rowid in memories:
            lift[rowid] = max(lift[rowid], lent)
    for rowid, _, _ in seeds:  # a seed gains nothing from its own entities
        lift.pop(rowid, None)
    return dict(lift)


def linked_rows(
    store: TenantStore,
    scope_key: str,
    fused: fusion.FusedRows,
    lift: dict[int, float],
    size: int,
    admit: CandidateFilter | None,
    settings: RetrievalSettings,
) -> tuple[fusion.FusedRows, dict[int, float]]:
    """The entity lift from the top rows (their fused score plus their neighbours' lift), and the
    candidates with the rows found only through an entity that ``admit`` lets in (None: none)."""
    if settings.entity_weight <= 0 or settings.entity_seeds <= 0 or not len(fused):
        return fused, {}
    raised = [
        (score + lift.get(rowid, 0.0), rowid)
        for rowid, score in zip(fused.rowids.tolist(), fused.scores.tolist(), strict=True)
    ]
    top = sorted(raised, key=lambda r: (-r[0], r[1]))[: settings.entity_seeds]
    seeds = [(rowid, kind, score) for score, rowid in top for kind in ("EPISODE", "MEMORY_FACT")]
    linked = entity_lift(store, scope_key, seeds, size, settings)
    known = set(fused.rowids.tolist())
    unknown = [r for r in linked if r not in known]
    new = store.admitted(scope_key, unknown, admit) if admit is not None and unknown else []
    kept = known | set(new)
    linked = {r: v for r, v in linked.items() if r in kept}
    return fused.with_rows(sorted(new)), linked
