"""Newer beats older: two recalled memories that state different values for the same thing.

Without a model, a memory's *claim* about the question is read from its own words: the sentence
of what the person said (an episode's summary and user text; a fact's text) that holds the most
of the question's informative words (weighed by their IDF in the scope; each word stemmed as the
lexical arm stems it) is the claim; its *topic* is those words, its *value* the numbers,
versions, times and amounts in it, and whether it is negated ("never", "not", "no longer"). Two
claims conflict when they share most of their topic (at least two words, or the question's only
one) and differ in value: different numbers, or one negates what the other does not. The newer
of the two (``observedAt``, then write order) then ranks just above the older, and the older is
marked as replaced by the newest such memory above it (``replacedBy`` in the answer, ``explain``
and the context block). A claim is read from the first ``CLAIM_CHARS`` characters of a memory's
own words, so a long memory costs no more than that.

It is a heuristic on the returned hits only (each claim is read once): it reorders, never
removes. With a chat model configured, the write path's conflict judgement
(``core/assist/judgement.py``) already retires an older fact a newer one supersedes, so such a
fact is never recalled at all; this acts on what remains, episodes above all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engramdb.core.ranking import Hit
from engramdb.core.rows import said
from engramdb.lexical.index import tokenize

MIN_SHARE = 0.5  # the claims' shared topic: at least this share of the smaller one
REPLACED_AT_MOST = 2  # newer rivals that pass an older memory in a round (bench/RESULTS.md: 1, 2, 3, no bound)
CLAIM_CHARS = 4_000  # a claim is read from the start of a memory's own words: a long text costs no more
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")
_VALUE = re.compile(
    r"(?<![\w.])(?:v(?=\d))?\d+(?:[.,:/-]\d+)*\s*(?:%|percent|ms|milliseconds?|seconds?|s|minutes?|min|hours?|h|"
    r"days?|weeks?|months?|years?|kb|mb|gb|tb|k|m|x|users?|commits?|rows?|items?|requests?)?(?![\w])",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:never|not|no\s+longer|none|nothing|\w+n't|cannot|no)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Claim:
    """What a memory says about the question: the words it is about and the value it gives."""

    topic: frozenset[str]
    values: frozenset[str]
    negated: bool


def claim_text(hit: Hit) -> str:
    """What the memory's own author said: an episode's summary and user text, a fact's text."""
    return said(hit.record.text) if hit.record.source == "EPISODE" else hit.record.text


def read_claim(text: str, stems: Mapping[str, float]) -> Claim | None:
    """The claim of ``text``: its sentence holding the most question-word information (None if it
    holds less than a third of it, or names no value and negates nothing). A sentence's words are
    stemmed as the lexical arm stems them, so "accuracy" is found by the question's "accuracies"."""
    total = sum(stems.values()) or 1.0
    best: tuple[float, str, frozenset[str]] | None = None
    for sentence in _SENTENCE.findall(text):
        found = frozenset(stems.keys() & tokenize(sentence))
        weight = sum(stems[s] for s in found)
        if found and (best is None or weight > best[0]):
            best = (weight, sentence, found)
    if best is None or best[0] < total / 3:
        return None
    _, sentence, found = best
    values = frozenset(" ".join(v.lower().split()) for v in _VALUE.findall(sentence))
    negated = bool(_NEGATION.search(sentence))
    return Claim(found, values, negated) if values or negated else None


def conflict(a: Claim, b: Claim, stems: int) -> bool:
    """Whether two claims give different values for the same thing."""
    shared = a.topic & b.topic
    if len(shared) < min(2, stems) or len(shared) < MIN_SHARE * min(len(a.topic), len(b.topic)):
        return False
    return (a.values != b.values and bool(a.values) and bool(b.values)) or a.negated != b.negated


def _newer(a: Hit, b: Hit) -> bool:
    return _age(a) > _age(b)


def newer_first(hits: Sequence[Hit], stems: Mapping[str, float], depth: int) -> list[Hit]:
    """``hits`` with the newer memories of a conflicting pair moved just above the older one (only
    the first ``depth`` hits are read), in two rounds: each older memory is passed by its best
    ranked newer rivals, at most ``REPLACED_AT_MOST`` of them, newest first; then each memory so
    raised is passed in the same way by its own newer rivals still below it. Up to four versions
    of one thing then read newest first, whatever their order (tests/core), and a cluster of
    memories that each give a number does not become a sort by time. Last, each memory is marked
    replaced by the newest memory above it that gives another value for the same thing."""
    ranked = list(hits)
    if not stems or len(ranked) < 2:
        return ranked
    head = ranked[:depth]
    claims = {id(h): read_claim(claim_text(h)[:CLAIM_CHARS], stems) for h in head}
    raised = _raise_rivals(head, claims, len(stems), olders=None, moved=set())
    _raise_rivals(head, claims, len(stems), olders=raised, moved=set(raised))  # a raised memory's own newer rivals
    _mark_replaced(head, claims, len(stems))
    return head + ranked[depth:]


def _raise_rivals(
    head: list[Hit], claims: Mapping[int, Claim | None], stems: int, olders: set[int] | None, moved: set[int]
) -> set[int]:
    """Move each newer rival just above the older memory it conflicts with, the first ones below
    it, up to ``REPLACED_AT_MOST`` of them (``olders``: only these ids are looked at as older; a
    memory in ``moved`` is not moved again). Return the ids of the memories moved."""
    above: dict[int, list[Hit]] = {}  # an older memory's id -> the newer ones moved above it
    raised: set[int] = set()
    i = 0
    while i < len(head):
        older, claim = head[i], claims[id(head[i])]
        placed = above.setdefault(id(older), [])
        newer = None
        if claim is not None and len(placed) < REPLACED_AT_MOST and (olders is None or id(older) in olders):
            newer = next(
                (
                    h
                    for h in head[i + 1 :]
                    if id(h) not in moved and _newer(h, older) and _conflicts(claim, claims[id(h)], stems)
                ),
                None,
            )
        if newer is None:
            i += 1
            continue
        # Those already moved above the older sit just above it; this one goes above the ones it is newer than.
        place = i - sum(1 for h in placed if _newer(newer, h))
        head.remove(newer)
        head.insert(place, newer)
        moved.add(id(newer))
        raised.add(id(newer))
        placed.append(newer)
        lift = max(0.0, _just_above(head, place) - newer.score)
        newer.features["newerFirst"] = newer.features.get("newerFirst", 0.0) + lift
        newer.score += lift
        i += 1  # the older one, now one place down, is looked at again
    return raised


def _mark_replaced(head: list[Hit], claims: Mapping[int, Claim | None], stems: int) -> None:
    claimed = [h for h in head if claims[id(h)] is not None]  # in rank order
    for i, hit in enumerate(claimed):
        claim = claims[id(hit)]
        replacing = [h for h in claimed[:i] if _newer(h, hit) and _conflicts(claims[id(h)], claim, stems)]
        if replacing:
            hit.replaced_by = max(replacing, key=_age).record.memory_id


def _age(hit: Hit) -> tuple[str, int]:
    return hit.record.observed_at, hit.record.rowid


def _just_above(head: list[Hit], place: int) -> float:
    """A score for the hit at ``place`` a hair above the one below it and not above the one above
    it (a tie when those two tie), so that the scores keep following the order."""
    below = head[place + 1].score
    step = 1e-6 if place == 0 else min(1e-6, (head[place - 1].score - below) / 2)
    return below + step


def _conflicts(a: Claim | None, b: Claim | None, stems: int) -> bool:
    return a is not None and b is not None and conflict(a, b, stems)
