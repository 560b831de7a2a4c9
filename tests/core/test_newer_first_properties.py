"""Newer first over random hits: whatever the claims, it only reorders the first ``depth`` hits, each
replaced memory ranks below a newer one that replaced it, and the scores follow the order
(core/conflicts.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engramdb.core.conflicts import REPLACED_AT_MOST, newer_first
from engramdb.core.ranking import Hit
from engramdb.storage.rows import MemoryRecord

STEMS = {"coverag": 2.0, "test": 1.0, "modul": 1.0}
SENTENCES = (
    "The test coverage of the module is {n}%.",
    "Module test coverage: {n}% now.",
    "Coverage is not measured for this module.",
    "The weather was {n} degrees.",
)


def _hit(index: int, day: int, sentence: str, n: int, score: float) -> Hit:
    record = MemoryRecord(
        rowid=index + 1,
        source="MEMORY_FACT",
        memory_id=f"m{index}",
        scope_key="s",
        text=sentence.format(n=n),
        trust_class="trusted",
        origin="test",
        status="active",
        confidence=1.0,
        observed_at=f"2024-01-{day:02d}T00:00:00.000000Z",
        recorded_at="2024-02-01T00:00:00.000000Z",
        event_json="{}",
        embed_state="ready",
        embed_error=None,
        embed_attempts=0,
    )
    return Hit(record=record, score=score)


def _ranked(drawn: list[tuple[int, str, int, float]]) -> list[Hit]:
    """Hits best first, as recall gives them (scores may tie)."""
    scores = sorted((score for *_, score in drawn), reverse=True)
    return [_hit(i, day, s, n, score) for i, ((day, s, n, _), score) in enumerate(zip(drawn, scores, strict=True))]


hits = st.lists(
    st.tuples(
        st.integers(1, 28),
        st.sampled_from(SENTENCES),
        st.sampled_from([60, 70, 80, 90]),
        st.sampled_from([1.0, 0.9, 0.5]),
    ),
    max_size=12,
).map(_ranked)


@given(hits, st.integers(1, 12))
def test_newer_first_only_reorders_and_keeps_its_marks_consistent(given_hits: list[Hit], depth: int) -> None:
    before = [h.record.memory_id for h in given_hits]
    ranked = newer_first(given_hits, STEMS, depth)
    after = [h.record.memory_id for h in ranked]

    assert sorted(after) == sorted(before)  # a permutation: nothing added, nothing removed
    assert after[depth:] == before[depth:]  # past the depth nothing moves
    place = {memory_id: i for i, memory_id in enumerate(after)}
    scores = [h.score for h in ranked[:depth]]
    assert scores == sorted(scores, reverse=True)  # the scores follow the order
    for i, hit in enumerate(ranked):
        if hit.replaced_by is not None:
            replacer = ranked[place[hit.replaced_by]]
            assert place[hit.replaced_by] < i  # the newer one ranks above what it replaced
            key = (replacer.record.observed_at, replacer.record.rowid)
            assert key > (hit.record.observed_at, hit.record.rowid)
    moved = [h for h in ranked if "newerFirst" in h.features]
    assert len([h for h in ranked if h.replaced_by is not None]) <= len(moved) * (REPLACED_AT_MOST + 1)
