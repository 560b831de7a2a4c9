"""Newer first over random hits: whatever the claims, it only reorders the first ``depth`` hits, each
memory is marked replaced by the newest memory above it that gives another value, and the scores
follow the order (core/conflicts.py)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from engramdb.core.conflicts import CLAIM_CHARS, claim_text, conflict, newer_first, read_claim
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


def _age(hit: Hit) -> tuple[str, int]:
    return hit.record.observed_at, hit.record.rowid


def _rivals(older: Hit, newer: Hit) -> bool:
    """Whether ``newer`` is newer than ``older`` and gives another value for the same thing."""
    a, b = (read_claim(claim_text(h)[:CLAIM_CHARS], STEMS) for h in (older, newer))
    return _age(newer) > _age(older) and a is not None and b is not None and conflict(a, b, len(STEMS))


@given(hits, st.integers(1, 12))
def test_newer_first_only_reorders_and_keeps_its_marks_consistent(given_hits: list[Hit], depth: int) -> None:
    before = [h.record.memory_id for h in given_hits]
    out_of_order = any(_rivals(o, n) for i, o in enumerate(given_hits[:depth]) for n in given_hits[i + 1 : depth])
    ranked = newer_first(given_hits, STEMS, depth)
    after = [h.record.memory_id for h in ranked]

    assert sorted(after) == sorted(before)  # a permutation: nothing added, nothing removed
    assert after[depth:] == before[depth:]  # past the depth nothing moves
    scores = [h.score for h in ranked[:depth]]
    assert scores == sorted(scores, reverse=True)  # the scores follow the order
    for i, hit in enumerate(ranked[:depth]):
        # replaced by the newest memory above it that gives another value, if there is one
        replacing = [h for h in ranked[:i] if _rivals(hit, h)]
        expected = max(replacing, key=_age).record.memory_id if replacing else None
        assert hit.replaced_by == expected
    if out_of_order:  # the positive control: a newer rival ranked below an older one is moved above it
        assert any(h.replaced_by is not None for h in ranked)


def _versions(order: tuple[int, ...]) -> list[Hit]:
    """One thing stated with another value each day, ranked in ``order`` (version numbers, 0 the oldest)."""
    return [_hit(v, v + 1, SENTENCES[0], 50 + 5 * v, 1.0 - rank / 20) for rank, v in enumerate(order)]


def test_up_to_four_versions_read_newest_first_in_any_order() -> None:
    for count in (2, 3, 4):
        for order in itertools.permutations(range(count)):
            ranked = newer_first(_versions(order), STEMS, count)
            newest = ranked[0].record.memory_id
            assert newest == f"m{count - 1}", order
            assert all(h.replaced_by == newest for h in ranked[1:]) and ranked[0].replaced_by is None


def test_a_cluster_of_versions_is_bounded_not_sorted_by_time() -> None:
    """Six versions ranked oldest first: each older one is passed by at most two rivals a round, in
    two rounds, so the cluster reads as two runs, each newest first, not as one sort by time (which
    would push every older statement, itself evidence, down the list). Without the bound it sorts."""
    ranked = newer_first(_versions(tuple(range(6))), STEMS, 6)
    assert [h.record.memory_id for h in ranked] == ["m3", "m2", "m1", "m0", "m5", "m4"]
    assert [h.replaced_by for h in ranked] == [None, "m3", "m3", "m3", None, "m5"]
