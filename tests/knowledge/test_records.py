"""Records on both backends: nested writes, idempotent imports, history, repeats in one write,
deletes with preview, and an audit chain that holds every record and relationship mutation."""

from __future__ import annotations

from collections import Counter
from typing import Any

from engramdb.core import audit
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.admin import AuditQuery
from engramdb.models.knowledge import (
    DeleteQuery,
    DeleteRequest,
    HistoryQuery,
    LinkRequest,
    RecordChange,
    RecordSearch,
    RecordsWritten,
    RecordWrite,
    RelationshipQuery,
    UnlinkRequest,
)
from tests.factories import scope_fields

MINE = scope_fields()
SESSION = {
    "title": "Billing kickoff",
    "startedAt": "2026-08-18T09:00:00Z",
    "DECISION": [{"title": "Use TypeScript", "topic": "billing"}],
    "TASK": [
        {"title": "Write the invoice migration", "status": "open", "OWNER": {"name": "Alice"}},
        {"title": "Review tax rules", "status": "open"},
    ],
}


def _write(service: MemoryService, caller: Caller, label: str, data: Any, **extra: Any) -> RecordsWritten:
    return service.record_writes.write_records(
        caller, RecordWrite.model_validate({"label": label, "data": data, "scope": MINE, **extra})
    )


def _all(service: MemoryService, caller: Caller, labels: list[str] | None = None) -> list[Any]:
    body = RecordSearch.model_validate({"labels": labels or [], "scope": MINE, "limit": 1000})
    return service.record_reads.search_records(caller, body).records


def _actions(service: MemoryService, caller: Caller) -> Counter[str]:
    entries = service.admin.audit(caller, AuditQuery(limit=1000)).entries
    return Counter(e.action for e in entries if e.action.startswith(("record.", "relationship.")))


def test_a_nested_write_is_a_linked_graph_and_importing_it_again_changes_nothing(
    service: MemoryService, operator: Caller
) -> None:
    first = _write(service, operator, "SESSION", SESSION, mergeBy=["title"])
    assert (first.created, first.updated, first.unchanged, first.relationships) == (5, 0, 0, 4)
    assert sorted(r.label for r in _all(service, operator)) == ["DECISION", "OWNER", "SESSION", "TASK", "TASK"]
    session = first.records[0]
    links = service.record_reads.list_relationships(
        operator, RelationshipQuery.model_validate({"id": session.id, **MINE})
    )
    assert sorted(r.type for r in links.relationships) == ["HAS_DECISION", "HAS_TASK", "HAS_TASK"]
    again = _write(service, operator, "SESSION", SESSION, mergeBy=["title"])
    assert (again.created, again.updated, again.unchanged, again.relationships) == (0, 0, 5, 0)
    assert again.records[0].id == session.id and len(_all(service, operator)) == 5
    # A changed property of the root is an update with history; a changed child is a new child.
    changed = {**SESSION, "mood": "calm", "TASK": [*SESSION["TASK"], {"title": "Load test", "status": "open"}]}
    third = _write(service, operator, "SESSION", changed, mergeBy=["title"])
    assert (third.created, third.updated, third.unchanged, third.relationships) == (1, 1, 4, 1)
    history = service.record_reads.record_history(operator, session.id, HistoryQuery.model_validate(MINE)).versions
    assert [v.version for v in history] == [1, 2] and "mood" not in history[0].properties
    assert history[1].properties["mood"] == "calm" and history[0].until is not None


def test_a_record_repeated_in_one_write_is_one_record(service: MemoryService, operator: Caller) -> None:
    written = _write(
        service,
        operator,
        "ENTITY",
        [{"name": "Alice", "role": "eng"}, {"name": "Bob"}, {"name": "Alice", "team": "billing"}],
        mergeBy=["name"],
    )
    assert written.created == 2 and [r.properties["name"] for r in written.records] == ["Alice", "Bob", "Alice"]
    alice = [r for r in _all(service, operator) if r.properties["name"] == "Alice"]
    assert len(alice) == 1 and alice[0].properties == {"name": "Alice", "role": "eng", "team": "billing"}
    twins = _write(service, operator, "SESSION", {"title": "s", "TASK": [{"title": "t"}, {"title": "t"}]})
    assert (twins.created, twins.relationships) == (2, 1)  # the same content under one parent is one child
    without_key = _write(service, operator, "NOTE", [{"text": "same"}, {"text": "same"}])
    assert without_key.created == 2  # no mergeBy, no parent: two notes, as written


def test_every_record_and_relationship_mutation_is_in_the_audit_chain(service: MemoryService, operator: Caller) -> None:
    written = _write(service, operator, "SESSION", SESSION, mergeBy=["title"])
    session = written.records[0]
    alice = _write(service, operator, "ENTITY", {"name": "Alice"}).records[0]
    link = {"source": session.id, "target": alice.id, "type": "MENTIONS", "scope": MINE}
    service.record_writes.link_records(operator, LinkRequest.model_validate(link))
    service.record_writes.link_records(operator, LinkRequest.model_validate(link))  # exists: not a mutation
    service.record_writes.update_record(
        operator, alice.id, RecordChange.model_validate({"properties": {"role": "eng"}, "scope": MINE})
    )
    service.record_writes.unlink_records(operator, UnlinkRequest.model_validate(link))
    preview = service.record_deletes.delete_record(
        operator, session.id, DeleteQuery.model_validate({**MINE, "dryRun": True, "cascade": True})
    )
    assert preview.dry_run and len(preview.records) == 5 and len(_all(service, operator)) == 6
    assert _actions(service, operator)["record.delete"] == 0  # a preview deletes nothing and audits nothing
    gone = service.record_deletes.delete_record(
        operator, session.id, DeleteQuery.model_validate({**MINE, "cascade": True})
    )
    assert set(gone.records) == set(preview.records) and gone.relationships == 4
    assert [r.id for r in _all(service, operator)] == [alice.id]
    assert _actions(service, operator) == Counter(
        {"record.create": 6, "relationship.create": 5, "record.update": 1, "relationship.delete": 1, "record.delete": 5}
    )
    assert audit.verify(service.shared.store.tenant("t1")).ok
    where = DeleteRequest.model_validate({"labels": ["ENTITY"], "where": {"name": "Alice"}, "scope": MINE})
    assert (
        service.record_deletes.delete_records(operator, where).records == [alice.id] and _all(service, operator) == []
    )


def test_a_record_deleted_while_a_link_is_made_leaves_no_relationship(
    service: MemoryService, operator: Caller, monkeypatch: Any
) -> None:
    """The ends are checked again inside the link's transaction: a delete that lands between the
    first check and the write would otherwise leave an edge to a row id the next record reuses."""
    from engramdb.core.knowledge import writing
    from engramdb.errors import InvalidInputError

    kept, doomed = (_write(service, operator, "TASK", {"title": t}).records[0].id for t in ("kept", "doomed"))
    link = {"source": kept, "type": "BLOCKS", "target": doomed, "scope": MINE}
    found = writing._node

    def found_then_deleted(tenant: Any, scope_key: str, spec: Any, side: str) -> Any:
        ref = found(tenant, scope_key, spec, side)
        if spec.id == doomed:  # a concurrent delete commits right after the target was found
            service.record_deletes.delete_record(operator, doomed, DeleteQuery.model_validate(MINE))
        return ref

    monkeypatch.setattr(writing, "_node", found_then_deleted)
    try:
        service.record_writes.link_records(operator, LinkRequest.model_validate(link))
        raise AssertionError("linked a deleted record")
    except InvalidInputError as error:
        assert error.field == "target.id"
    query = RelationshipQuery.model_validate({**MINE, "id": kept})
    assert service.record_reads.list_relationships(operator, query).relationships == []
    monkeypatch.undo()  # positive control: the same link between two live records is made
    alive = _write(service, operator, "TASK", {"title": "alive"}).records[0].id
    made = service.record_writes.link_records(operator, LinkRequest.model_validate({**link, "target": alive}))
    assert made.target.id == alive
    assert [r.target.id for r in service.record_reads.list_relationships(operator, query).relationships] == [alive]
