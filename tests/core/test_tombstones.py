"""Value normalisation: merges only the listed variants, never meaningful differences."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engramdb.core.tombstones import normalize_value, value_hash

words = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzäöü0123456789", min_size=1, max_size=8), min_size=1, max_size=6
)


@settings(max_examples=300, derandomize=True)
@given(st.text(max_size=60))
def test_normalisation_is_idempotent(text: str) -> None:
    assert normalize_value(normalize_value(text)) == normalize_value(text)


@settings(max_examples=300, derandomize=True)
@given(words, st.sampled_from([" ", "  ", "\t", "\n ", "\u00a0"]), st.sampled_from(["", ".", "!", "?!", " ."]))
def test_spacing_case_and_trailing_punctuation_do_not_make_a_new_value(
    parts: list[str], space: str, ending: str
) -> None:
    plain = " ".join(parts)
    variant = f"  {space.join(p.upper() for p in parts)}{ending} "
    assert value_hash(plain) == value_hash(variant)


@settings(max_examples=300, derandomize=True)
@given(words, words)
def test_different_words_stay_different_values(a: list[str], b: list[str]) -> None:
    if [w.casefold() for w in a] != [w.casefold() for w in b]:
        assert value_hash(" ".join(a)) != value_hash(" ".join(b))


def test_concrete_cases() -> None:
    assert normalize_value("Prefers  MongoDB.") == "prefers mongodb"
    assert normalize_value("ｆｕｌｌｗｉｄｔｈ") == "fullwidth"  # NFKC
    assert normalize_value("STRASSE") == normalize_value("straße")  # case folding
    assert value_hash("MongoDB 5") != value_hash("MongoDB 6")
    assert value_hash("not vim") != value_hash("vim")
    assert normalize_value("Version 2.0") == "version 2.0"  # inner punctuation is meaning
