"""A read of the change feed passes over at most ``MAX_SCAN`` audit entries, ``PAGE`` sequence
numbers a statement, however few of them match its kinds: one statement used to pass over the whole
log to fill a page (a review: 532 ms for ``kinds=restored`` over a million entries, 47 ms without).
The cursor takes the reader on from where it stopped, and nothing is skipped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.changes import feed
from engramdb.core.service import MemoryService
from engramdb.models.changes import ChangeQuery
from engramdb.models.erasure import DeleteMemoryQuery
from engramdb.storage.feed.changes import ChangeLog
from tests.factories import episode_body, scope_fields

SCOPE = scope_fields()


def test_a_sparse_kind_is_read_a_window_at_a_time_and_the_cursor_goes_on(
    service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feed, "PAGE", 10)
    monkeypatch.setattr(feed, "MAX_SCAN", 40)
    ids = [
        service.writes.write_episode(
            operator, EpisodeWrite.model_validate(episode_body(f"Turn {i}.", session="s", turn=i, scope=SCOPE))
        ).id
        for i in range(60)
    ]
    service.erasure.delete_episode(operator, ids[7], DeleteMemoryQuery.model_validate(SCOPE))  # the one match, last
    windows: list[tuple[int, int | None]] = []
    read = ChangeLog.changes

    def spied(self: ChangeLog, after_seq: int, limit: int, actions: Sequence[str], **where: Any) -> Any:
        windows.append((after_seq, where["through_seq"]))
        return read(self, after_seq, limit, actions, **where)

    monkeypatch.setattr(ChangeLog, "changes", spied)
    first = service.changes.list_changes(operator, ChangeQuery(kinds="deleted"))
    assert (first.changes, first.next_after, first.more) == ([], 40, True)  # stopped after MAX_SCAN entries
    assert windows == [(0, 10), (10, 20), (20, 30), (30, 40)]  # each statement PAGE sequence numbers at most

    found, after = [], first.next_after
    while True:  # the cursor takes the reader on, a window at a time
        page = service.changes.list_changes(operator, ChangeQuery(kinds="deleted", after=after))
        found += page.changes
        after = page.next_after
        if not page.more:
            break
    assert [(c.kind, c.id) for c in found] == [("deleted", ids[7])]  # nothing skipped
    assert all(through is not None and through - start <= 10 for start, through in windows)

    windows.clear()
    every = service.changes.list_changes(operator, ChangeQuery(limit=5))  # the control: a kind every entry has
    assert len(every.changes) == 5 and windows == [(0, 10)]  # one window held the page
