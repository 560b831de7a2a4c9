"""``stems_present`` finds exactly the stems that stemming the whole text finds, while it stems
only the words that start like one of them: Porter rewrites only a word's end."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engramdb.core.relevance import QueryWords
from engramdb.lexical import porter
from engramdb.lexical.index import stems_present, tokenize

# Every suffix Porter's steps read or write, on roots short enough for each rule's measure.
SUFFIXES = (
    "ational tional enci anci izer bli alli entli eli ousli ization ation ator alism iveness fulness ousness "
    "aliti iviti biliti logi icate ative alize iciti ical ful ness sses ies ss s eed ed ing at bl iz y ly ity "
    "ility ibility ably e ll ency ancy"
).split()
ROOTS = ("a", "b", "ab", "ba", "bab", "cat", "oy", "y", "ya", "sens", "relat", "condit", "hop", "ñ", "ña")
# Characters whose UTF-8 ends in a doubled byte: FTS5 cuts the second as a doubled consonant.
BROKEN = ("\uaaaa", "\U00010041")  # 3 bytes and 4 (a Linear B syllable)


def _whole(text: str, stems: set[str]) -> set[str]:
    return set(tokenize(text)) & stems


def test_every_word_is_found_by_its_own_stem() -> None:
    words = [r + a + b for r in ROOTS for a, b in itertools.product(SUFFIXES, repeat=2)]
    words += [r + c + s for r in ROOTS for c in BROKEN for s in ("ing", "ed", "")]
    for word in words:
        for stem in tokenize(word):
            assert stems_present(word, {stem}) == {stem}, (word, stem)
    for c in BROKEN:  # control: FTS5 cut each of these characters in two
        assert any("\udc80" <= ch <= "\udcff" for ch in porter.stem("hop" + c + "ing"))


def test_only_the_words_that_start_like_a_stem_are_stemmed() -> None:
    rng = random.Random(5)
    made_up = {"".join(rng.choices("cdefghijklmnopqrstuvwxyz", k=8)) for _ in range(500)}  # none start "b"
    text = " ".join([*made_up, "the", "batteries"])
    porter.stem.cache_clear()
    assert stems_present(text, {"batteri"}) == {"batteri"}
    assert porter.stem.cache_info().misses == 1  # "batteries" alone
    porter.stem.cache_clear()
    assert "batteri" in tokenize(text)
    assert porter.stem.cache_info().misses > 500  # control: the whole text stems every word


def test_a_word_of_another_stem_is_not_found() -> None:
    assert stems_present("the cats ran", {"dog", "cat"}) == {"cat"}  # control: cat is found
    assert stems_present("the accuracy of it", {"accuraci"}) == {"accuraci"}  # Porter respells the end
    assert stems_present("the accurate one", {"accuraci"}) == set()
    assert stems_present("anything", set()) == set()


def test_relevance_weighs_the_stems_found() -> None:
    words = QueryWords.of(["battery", "charger"], 100, {"battery": 3, "charger": 40})
    assert words.evidence("the batteries died") == words.stems["batteri"] / sum(words.stems.values())
    assert words.evidence("nothing here") == 0.0
    assert words.evidence("batteries and chargers") == 1.0


_FRAGMENTS = st.sampled_from([*SUFFIXES, *ROOTS, *BROKEN, " ", " ", "-", "É", "ß", "x_y", "42", "Ünï", "ies"])


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(_FRAGMENTS, max_size=30).map("".join),
    asked=st.lists(st.lists(_FRAGMENTS, min_size=1, max_size=4).map("".join), max_size=6),
    from_text=st.integers(min_value=0, max_value=4),
)
def test_the_stems_found_are_those_of_the_whole_text(text: str, asked: list[str], from_text: int) -> None:
    stems = {s for word in asked for s in tokenize(word)} | set(tokenize(text)[:from_text])
    assert stems_present(text, stems) == _whole(text, stems)
