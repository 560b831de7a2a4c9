"""A stored row becomes the same ``MemoryRecord`` whichever way it is built: ``memory_record`` (which
skips the frozen dataclass's ``__init__``, for speed) and ``MemoryRecord(*row)`` give records that
are equal, hash alike, show alike, stay frozen and are replaced alike; and both backends' reads
give what the row holds."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engramdb.contract.writes import EpisodeWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.storage.columns import MEMORY_COLUMNS, memory_record
from engramdb.storage.port import MemoryRecord, Store
from tests.factories import episode_body, scope_fields

WIDTH = len(dataclasses.fields(MemoryRecord))
values = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))


def test_the_columns_are_the_fields_in_order() -> None:
    names = [c.strip() for c in MEMORY_COLUMNS.split(",")]
    assert names == [f.name for f in dataclasses.fields(MemoryRecord)]


@given(st.lists(values, min_size=WIDTH, max_size=WIDTH))
def test_a_full_row_makes_the_record_init_makes(row: list[Any]) -> None:
    built, made = memory_record(tuple(row)), MemoryRecord(*row)
    assert type(built) is MemoryRecord
    assert built == made and vars(built) == vars(made)
    assert repr(built) == repr(made) and hash(built) == hash(made)
    assert pickle.loads(pickle.dumps(built)) == made
    assert dataclasses.replace(built, text="other") == dataclasses.replace(made, text="other")
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.text = "changed"  # type: ignore[misc]  # frozen: the point of the check


def test_a_row_of_another_width_goes_through_init() -> None:
    short: tuple[Any, ...] = (
        1,
        "EPISODE",
        "m",
        "s",
        "text",
        "trusted",
        "stated",
        "active",
        1.0,
        "t",
        "t",
        "{}",
        "ready",
        None,
        0,
    )
    assert memory_record(short) == MemoryRecord(*short)  # the rest left to their defaults
    assert memory_record(short).importance is None
    with pytest.raises(TypeError):  # too many values: __init__ refuses, as before
        memory_record((*short, *([None] * WIDTH)))


def test_each_backend_reads_the_record_it_wrote(store: Store, service: MemoryService) -> None:
    caller = Caller("t1", "k", "admin")
    store.tenant("t1", create=True)
    service.writes.write_episode(
        caller, EpisodeWrite.model_validate(episode_body("I prefer tea.", "Noted.", scope=scope_fields()))
    )
    tenant = store.tenant("t1")
    listed = tenant.list_episodes(
        auth.scope_key(service.shared.scope(caller, scope_fields())),
        session_id=None,
        after=None,
        before=None,
        below=None,
        limit=5,
    )
    assert len(listed) == 1  # the control: the row is there
    record = listed[0]
    assert type(record) is MemoryRecord and record.text.startswith("I prefer tea.") and record.source == "EPISODE"
    assert tenant.records([record.rowid], with_event=True) == {record.rowid: record}
    lean = tenant.records([record.rowid], with_event=False)[record.rowid]  # the event's column read as ''
    assert lean.event_json == "" and record.event_json != ""
    assert dataclasses.replace(lean, event_json=record.event_json) == record
