"""A record's mergeBy values identify it after a PATCH too, on both backends. The merge key was
made once, at the write: renaming a session merged by its title left the old title finding it
(a write by that title changed the renamed record) and the new one not (a write by it made a
duplicate)."""

from __future__ import annotations

from typing import Any

import pytest

from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.errors import ConflictError
from engramdb.models.knowledge import HistoryQuery, RecordChange, RecordSearch, RecordsWritten, RecordWrite
from tests.conftest import LiveServer
from tests.factories import scope_fields

MINE = scope_fields()


def _upsert(service: MemoryService, caller: Caller, data: Any, merge_by: list[str] | None = None) -> RecordsWritten:
    body = {"label": "SESSION", "data": data, "scope": MINE, "mergeBy": merge_by or ["title"]}
    return service.record_writes.write_records(caller, RecordWrite.model_validate(body))


def _patch(service: MemoryService, caller: Caller, record_id: str, **properties: Any) -> Any:
    change = RecordChange.model_validate({"properties": properties, "scope": MINE})
    return service.record_writes.update_record(caller, record_id, change)


def _sessions(service: MemoryService, caller: Caller) -> dict[str, Any]:
    found = service.record_reads.search_records(
        caller, RecordSearch.model_validate({"labels": ["SESSION"], "limit": 100, "scope": MINE})
    )
    return {r.id: r.properties for r in found.records}


def test_a_renamed_record_is_found_by_its_new_mergeby_value_and_not_its_old_one(
    service: MemoryService, operator: Caller
) -> None:
    kickoff = _upsert(service, operator, {"title": "Kickoff", "room": "A"}).records[0].id
    _patch(service, operator, kickoff, title="Billing kickoff")
    again = _upsert(service, operator, {"title": "Billing kickoff", "room": "B"})
    assert (again.created, again.updated) == (0, 1) and again.records[0].id == kickoff
    old = _upsert(service, operator, {"title": "Kickoff", "room": "C"})
    assert old.created == 1 and old.records[0].id != kickoff
    assert _sessions(service, operator) == {
        kickoff: {"title": "Billing kickoff", "room": "B"},
        old.records[0].id: {"title": "Kickoff", "room": "C"},
    }
    # Control: a PATCH of a property that is not a mergeBy one leaves the key where it was.
    _patch(service, operator, kickoff, room="D")
    assert _upsert(service, operator, {"title": "Billing kickoff", "room": "E"}).records[0].id == kickoff


def test_a_patch_to_another_records_mergeby_values_is_a_conflict_and_changes_nothing(
    service: MemoryService, operator: Caller
) -> None:
    first = _upsert(service, operator, {"title": "One", "team": "x"}, ["title", "team"]).records[0]
    second = _upsert(service, operator, {"title": "Two", "team": "x"}, ["title", "team"]).records[0]
    with pytest.raises(ConflictError) as refused:
        _patch(service, operator, first.id, title="Two", note="n")
    assert refused.value.field == "properties.title" and second.id in str(refused.value)
    assert _sessions(service, operator)[first.id] == {"title": "One", "team": "x"}
    history = service.record_reads.record_history(operator, first.id, HistoryQuery.model_validate(MINE))
    assert [v.version for v in history.versions] == [1]
    # Control: the same PATCH to values no record has is made, and a write by them finds it.
    assert _patch(service, operator, first.id, title="Three").properties["title"] == "Three"
    assert _upsert(service, operator, {"title": "Three", "team": "x"}, ["title", "team"]).records[0].id == first.id


def test_a_record_without_its_mergeby_value_is_not_found_by_it_until_it_has_one_again(
    service: MemoryService, operator: Caller
) -> None:
    weekly = _upsert(service, operator, {"title": "Weekly", "room": "A"}).records[0].id
    _patch(service, operator, weekly, title=None)
    other = _upsert(service, operator, {"title": "Weekly", "room": "B"}).records[0].id
    assert other != weekly and _sessions(service, operator)[weekly] == {"room": "A"}
    with pytest.raises(ConflictError):  # the new one holds the title now
        _patch(service, operator, weekly, title="Weekly")
    _patch(service, operator, weekly, title="Weekly (old)")
    assert _upsert(service, operator, {"title": "Weekly (old)", "room": "C"}).records[0].id == weekly


def test_a_child_known_by_its_content_is_found_by_the_content_it_was_written_with(
    service: MemoryService, operator: Caller
) -> None:
    tree = {"title": "Sprint", "TASK": [{"title": "Write tests", "status": "open"}]}
    task = _upsert(service, operator, tree).records[0]
    tasks = service.record_reads.search_records(
        operator, RecordSearch.model_validate({"labels": ["TASK"], "scope": MINE})
    ).records
    _patch(service, operator, tasks[0].id, status="done")
    again = _upsert(service, operator, tree)  # the same import: it finds the child and sets it back
    assert (again.created, again.updated) == (0, 1) and again.records[0].id == task.id
    found = service.record_reads.search_records(
        operator, RecordSearch.model_validate({"labels": ["TASK"], "scope": MINE})
    ).records
    assert [(t.id, t.properties["status"]) for t in found] == [(tasks[0].id, "open")]


def test_a_conflicting_patch_over_rest_is_409_naming_the_property(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        ids = [
            http.post("/v1/records", json={"label": "TEAM", "mergeBy": ["name"], "data": {"name": n}}).json()[
                "records"
            ][0]["id"]
            for n in ("red", "blue")
        ]
        clash = http.patch(f"/v1/records/{ids[0]}", json={"properties": {"name": "blue"}})
        assert clash.status_code == 409 and clash.json()["field"] == "properties.name", clash.text
        moved = http.patch(f"/v1/records/{ids[0]}", json={"properties": {"name": "green"}})
        assert moved.status_code == 200 and moved.json()["properties"]["name"] == "green", moved.text
