"""Recall on the inference path: the recent-write cache, merging by id, the result record.

The cache holds this process's latest writes (episodes and facts, 128 by default) so that a
memory is recallable before the server has it. It is searched by words, only within the exact
five-field scope asked for; its hits are merged with the server's by id (the server's copy
wins), and up to half of the result slots are kept for writes the server did not return.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from engramdb.contract.events import Scope
from engramdb.contract.format import FormattableMemory, format_context
from engramdb.models.recall import RecalledMemory

MIN_TIMEOUT, MAX_TIMEOUT, DEFAULT_TIMEOUT = 0.05, 30.0, 0.3
MAX_LIMIT = 20
_WORD = re.compile(r"\w+")
_STOPWORDS = frozenset(
    "a an and are as at be but by do does did for from has have how i in is it its me my no not "
    "of on or our so that the their them then there these they this to was we were what when "
    "where which who why will with you your".split()
)


def clamp_timeout(seconds: float) -> float:
    """Return ``seconds`` clamped to 50 ms - 30 s."""
    return min(MAX_TIMEOUT, max(MIN_TIMEOUT, seconds))


def terms(text: str) -> set[str]:
    """Return the lower-cased content words of ``text``."""
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOPWORDS}


@dataclass(frozen=True)
class CachedMemory:
    """A memory this process wrote, as recall shows it."""

    id: str
    source: str  # EPISODE or MEMORY_FACT
    text: str
    scope: Scope
    trust_class: str
    session_id: str | None = None
    subject_key: str | None = None
    kind: str | None = None
    written_at: float = field(default_factory=time.time)


@dataclass(frozen=True)
class RecallItem:
    """One recalled memory, from the server or from the recent-write cache."""

    id: str
    source: str
    text: str
    score: float
    trust_class: str
    status: str = "active"
    origin: str = "stated"
    cached: bool = False

    @classmethod
    def of(cls, memory: RecalledMemory) -> RecallItem:
        return cls(
            memory.id, memory.source, memory.text, memory.score, memory.trust_class, memory.status, memory.origin
        )


@dataclass(frozen=True)
class RecallOutcome:
    """What recall returned: the context block, the memories behind it, and any failure."""

    context: str
    memories: tuple[RecallItem, ...] = ()
    error: str | None = None
    elapsed_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


class RecentWrites:
    """A bounded, thread-safe cache of recent writes, searched within one exact scope."""

    def __init__(self, capacity: int = 128, *, multi_valued_kinds: Collection[str] = ()) -> None:
        self.capacity = capacity
        self.multi_valued_kinds = frozenset(multi_valued_kinds)
        self._items: OrderedDict[str, CachedMemory] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def add(self, memory: CachedMemory) -> None:
        """Remember a write; a new fact displaces the cached one of a single-valued slot."""
        with self._lock:
            if memory.source == "MEMORY_FACT" and memory.kind not in self.multi_valued_kinds:
                slot = (memory.scope, memory.subject_key, memory.kind)
                stale = [
                    k
                    for k, m in self._items.items()
                    if m.source == "MEMORY_FACT" and (m.scope, m.subject_key, m.kind) == slot
                ]
                for key in stale:
                    del self._items[key]
            self._items[memory.id] = memory
            self._items.move_to_end(memory.id)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def search(
        self, query: str, scope: Scope, *, limit: int, exclude_session_id: str | None = None
    ) -> list[RecallItem]:
        """Return cached memories of exactly ``scope`` sharing words with ``query``, best first."""
        wanted = terms(query)
        if not wanted:
            return []
        with self._lock:
            candidates = [
                m
                for m in self._items.values()
                if m.scope == scope and (exclude_session_id is None or m.session_id != exclude_session_id)
            ]
        scored = []
        for memory in candidates:
            overlap = len(wanted & terms(memory.text)) / len(wanted)
            if overlap > 0:
                scored.append((overlap, memory.written_at, memory))
        scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
        return [
            RecallItem(m.id, m.source, m.text, round(score, 3), m.trust_class, cached=True)
            for score, _, m in scored[:limit]
        ]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def merge(remote: Sequence[RecallItem], cached: Sequence[RecallItem], limit: int) -> list[RecallItem]:
    """Merge by id: the server's copy wins; writes it did not return keep up to half the slots."""
    known = {item.id for item in remote}
    fresh = [item for item in cached if item.id not in known]
    keep_fresh = min(len(fresh), max(1, limit // 2))
    keep_remote = min(len(remote), limit - keep_fresh)
    keep_fresh = min(len(fresh), limit - keep_remote)  # slots the server left empty
    return [*remote[:keep_remote], *fresh[:keep_fresh]]


def render(items: Sequence[RecallItem], max_chars: int) -> str:
    """Return the untrusted-context block for ``items`` (empty when none fits)."""
    return format_context(
        [FormattableMemory(i.source, i.text, i.score, i.trust_class, i.status, i.origin) for i in items],
        max_chars=max_chars,
    )
