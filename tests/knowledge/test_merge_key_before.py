"""Records from before a record kept its mergeBy names, in a SQLite file as an earlier version left
it: the file gains the column when it opens, a PATCH keeps such a record's key (its names are not
known), and a write that merges by the names teaches the record them, after which the key moves."""

from __future__ import annotations

from typing import Any

import pytest

from engramdb.config import Settings
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.models.knowledge import RecordChange, RecordWrite
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import scope_fields

MINE = scope_fields()
OPERATOR = Caller(tenant="t1", key_id="test-operator", role="admin")


@pytest.fixture
def backend() -> str:
    return "sqlite"


def _upsert(service: MemoryService, title: str) -> str:
    body = {"label": "SESSION", "data": {"title": title}, "scope": MINE, "mergeBy": ["title"]}
    return service.record_writes.write_records(OPERATOR, RecordWrite.model_validate(body)).records[0].id


def _rename(service: MemoryService, record_id: str, title: str) -> Any:
    change = RecordChange.model_validate({"properties": {"title": title}, "scope": MINE})
    return service.record_writes.update_record(OPERATOR, record_id, change)


def test_a_file_from_before_gains_the_names_and_its_records_learn_them_when_merged(
    settings: Settings, store: SQLiteStore, operator: Caller
) -> None:
    service = MemoryService(store, HashingEmbedder(), settings)
    kickoff = _upsert(service, "Kickoff")
    with store.tenant("t1")._db.write() as conn:  # as an earlier version made the file
        conn.execute("ALTER TABLE records DROP COLUMN merge_identity")
    store.close()
    reopened = SQLiteStore(settings.home)
    try:
        columns = {r[1] for r in reopened.tenant("t1")._db.fetchall("PRAGMA table_info(records)")}
        assert "merge_identity" in columns
        service = MemoryService(reopened, HashingEmbedder(), settings)
        _rename(service, kickoff, "Renamed")
        assert _upsert(service, "Kickoff") == kickoff  # its names unknown: the key stayed, as before
        _rename(service, kickoff, "Renamed again")  # the merge above taught it its names: the key moves
        assert _upsert(service, "Renamed again") == kickoff
        assert _upsert(service, "Kickoff") != kickoff  # control: the old title finds it no longer
    finally:
        reopened.close()


NESTED = '{"mergeBy": ' + "[" * 100_000 + "]" * 100_000 + "}"  # deeper than json.loads goes


@pytest.mark.parametrize(
    "kept",
    ["not json", '{"mergeBy": 5}', '{"mergeBy": []}', '["title"]', '{"mergeBy": ["nope"]}', NESTED],
    ids=["text", "number", "empty", "list", "other-names", "nested"],
)
def test_names_that_are_not_names_leave_the_key_where_it_is(
    settings: Settings, store: SQLiteStore, operator: Caller, kept: str
) -> None:
    """What an import file (edited by hand) put there: a PATCH is made, and the key stays, as for a
    record written before names were kept."""
    service = MemoryService(store, HashingEmbedder(), settings)
    kickoff = _upsert(service, "Kickoff")
    with store.tenant("t1")._db.write() as conn:
        conn.execute("UPDATE records SET merge_identity = ?", (kept,))
    assert _rename(service, kickoff, "Renamed").properties["title"] == "Renamed"
    assert _upsert(service, "Kickoff") == kickoff
