"""The time-words feature: a question's relative time ("last week", "two sessions ago", "before
the migration") resolved against the recall's anchor (``asOf``, else now) into what it favours.

``core/timewords.py`` reads the words; this module turns what needs the store into something a
memory can be checked against: "N sessions ago" into the N-th newest session of the scope before
the anchor (the asker's current session, ``excludeSessionId``, left out), and "before X" / "after
X" into the time of the memory that best matches X's words (the lexical arm, one row). A memory
then scores ``time_words_weight`` times its closeness: 1 inside a window (falling by e every
``date_decay_days`` outside it), in a named session, or on the named side of an event; 0 otherwise.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from engramdb import clock
from engramdb.config import RetrievalSettings
from engramdb.core import timewords
from engramdb.core.timewords import Around, TimeWords
from engramdb.storage.port import CandidateFilter, MemoryRecord, TenantStore

SESSION_PAGE = 500  # newest episodes read to order the scope's sessions

Feature = Callable[[MemoryRecord], float]


def time_feature(
    store: TenantStore,
    scope_key: str,
    query: str,
    anchor: dt.datetime,
    filt: CandidateFilter,
    settings: RetrievalSettings,
    terms: Callable[[str], list[str]],
) -> Feature | None:
    """The feature for ``query``'s time words (None when it has none or the weight is 0)."""
    if settings.time_words_weight <= 0:
        return None
    words = timewords.read(query, anchor.date())
    if not words:
        return None
    sessions = _sessions(store, scope_key, words, anchor, filt)
    events = [(e, pivot) for e in words.events if (pivot := _pivot(store, scope_key, e, filt, terms)) is not None]
    if not (words.windows or sessions or events):
        return None
    weight, decay = settings.time_words_weight, settings.date_decay_days

    def feature(record: MemoryRecord) -> float:
        best = timewords.closeness(clock.parse(record.observed_at).date(), words.windows, decay) if words.windows else 0
        if record.session_id is not None and record.session_id in sessions:
            best = 1.0
        for event, (at, rowid) in events:
            position = (record.observed_at, record.rowid)
            if (position < (at, rowid)) if event.side == "before" else (position > (at, rowid)):
                best = 1.0
        return weight * best

    return feature


def _sessions(
    store: TenantStore, scope_key: str, words: TimeWords, anchor: dt.datetime, filt: CandidateFilter
) -> frozenset[str]:
    """The session ids "N sessions ago" names: the scope's sessions newest first (by their latest
    episode before the anchor), the current one (``exclude_session_id``) left out."""
    if not words.sessions:
        return frozenset()
    rows = store.list_episodes(
        scope_key, session_id=None, after=None, before=clock.to_text(anchor), below=None, limit=SESSION_PAGE
    )
    current = filt.exclude_session_id
    order = list(dict.fromkeys(r.session_id for r in rows if r.session_id is not None and r.session_id != current))
    return frozenset(order[s.back - 1] for s in words.sessions if 0 < s.back <= len(order))


def _pivot(
    store: TenantStore, scope_key: str, event: Around, filt: CandidateFilter, terms: Callable[[str], list[str]]
) -> tuple[str, int] | None:
    """When the event happened: the time and rowid of the memory that best matches its words."""
    words = terms(event.event)
    if not words:
        return None
    found = store.text_candidates(scope_key, words, filt, 1)
    if not found:
        return None
    record = store.records([found[0].rowid], with_event=False).get(found[0].rowid)
    return None if record is None else (record.observed_at, record.rowid)
