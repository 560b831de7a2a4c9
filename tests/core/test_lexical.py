"""The in-memory lexical arm makes the words FTS5 makes and ranks as FTS5's bm25() ranks.

SQLite FTS5 is the reference: the same texts go into an FTS5 table with the tokenizer the
index imitates, and its ``fts5vocab`` words and ``bm25()`` scores are compared with ours.
"""

from __future__ import annotations

import itertools
import random
import sqlite3
import string
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engramdb.lexical.index import LexicalIndex, tokenize

TOKENIZER = "porter unicode61 remove_diacritics 2"

SAMPLES = [
    "Running memories generously, caresses PONIES. Café naïve user_name x2y as is abc",
    "It's 3:45pm -- we're going to Zoë's party; the cats are running (again)!",
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Melanie painted a lake sunrise in 2022 -- acrylics, 40x50cm, for her kids' room.",
    "co-operation re-entry e-mail U.S.A. 1,000,000 3.14159 #hashtag @mention",
    "Ångström résumé façade jalapeño crème brûlée Dvořák Łódź",
]

# Latin letters with and without accents, digits and separators.
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:'\"-_!?()éèêëàâäôöûüçñíóúÉÀÇ"


def _fts(texts: list[str]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '{TOKENIZER}')")
    conn.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", enumerate(texts))
    conn.execute("CREATE VIRTUAL TABLE words USING fts5vocab(t, 'instance')")
    return conn


def _fts_words(conn: sqlite3.Connection, doc: int) -> list[str]:
    rows = conn.execute("SELECT term FROM words WHERE doc = ? ORDER BY offset", (doc,))
    return [r[0] for r in rows]


def test_words_match_fts5_on_samples() -> None:
    conn = _fts(SAMPLES)
    for doc, text in enumerate(SAMPLES):
        assert tokenize(text) == _fts_words(conn, doc), text
    assert "run" in tokenize(SAMPLES[0])  # stemmed, as FTS5's porter stems
    assert "cafe" in tokenize(SAMPLES[0])  # diacritics removed


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=120))
def test_words_match_fts5_on_latin_text(text: str) -> None:
    conn = _fts([text])
    assert tokenize(text) == _fts_words(conn, 0)


def _differences(words: Sequence[str]) -> list[tuple[str, list[str], list[str]]]:
    """Return (word, our terms, FTS5's terms) for each word, one FTS5 row apiece, where they differ."""
    conn = _fts(list(words))
    # FTS5 stems bytes: a stem may end inside a character, which we escape the same way.
    conn.text_factory = lambda raw: raw.decode("utf-8", "surrogateescape")
    theirs: list[list[str]] = [[] for _ in words]
    for doc, term in conn.execute("SELECT doc, term FROM words ORDER BY doc, offset"):
        theirs[doc].append(term)
    return [(w, tokenize(w), t) for w, t in zip(words, theirs, strict=True) if tokenize(w) != t]


def test_stems_match_fts5_on_every_short_word() -> None:
    words = ["".join(p) for n in (1, 2, 3) for p in itertools.product(string.ascii_lowercase, repeat=n)]
    differences = _differences(words)
    assert not differences, f"{len(differences)} of {len(words)} differ, e.g. {differences[:20]}"


# Vowels, "y" and the letters of the suffixes where Porter implementations part ways ("-bli",
# "-logi", "-ies", "-eed", "-yyed"), with a few other consonants for measure and *o.
_RICH = "aaeeiioouuyyy" + "bbllggiissddee" + "nrtcmwxzv"


@pytest.mark.slow
def test_stems_match_fts5_on_random_words() -> None:
    rng = random.Random(20261201)
    words = ["".join(rng.choices(_RICH, k=rng.randint(3, 10))) for _ in range(300_000)]
    differences = _differences(words)
    assert not differences, f"{len(differences)} of {len(words)} differ, e.g. {differences[:20]}"


# Real words carrying each suffix Porter's steps treat; a final "y" becomes the "i" of "-enci",
# "-bli", "-logi", "-aliti"... in step 1c.
_ENGLISH = {
    "ational": "relational rational operational sensational educational inspirational",
    "tional": "conditional additional traditional emotional exceptional intentional",
    "enci": "valency dependency frequency emergency efficiency fluency tendency",
    "anci": "hesitancy vacancy redundancy relevancy pregnancy discrepancy",
    "izer": "digitizer organizer fertilizer sanitizer equalizer synthesizer",
    "bli": "possibly humbly terribly visibly incredibly probably notably feebly nobly doubly "
    "sensibly bubbly suitably comfortably responsibly",
    "alli": "radically formally normally finally totally musically",
    "entli": "recently currently differently evidently frequently",
    "eli": "vaguely widely closely rarely completely",
    "ousli": "generously famously nervously seriously analogously",
    "ization": "organization civilization realization specialization vietnamization",
    "ation": "predication information relation conversation vocation",
    "ator": "operator indicator creator translator",
    "alism": "feudalism nationalism realism formalism",
    "iveness": "decisiveness effectiveness attractiveness",
    "fulness": "hopefulness usefulness carefulness helpfulness",
    "ousness": "callousness nervousness seriousness consciousness",
    "aliti": "formality reality personality equality",
    "iviti": "sensitivity activity creativity productivity",
    "biliti": "sensibility ability possibility flexibility responsibility",
    "logi": "analogy archaeology biology technology psychology apology ecology trilogy",
    "icate": "triplicate duplicate authenticate sophisticate",
    "ative": "formative talkative creative relative negative",
    "alize": "formalize realize normalize finalize",
    "iciti": "electricity simplicity authenticity publicity",
    "ical": "electrical critical musical physical typical",
    "ful": "hopeful careful beautiful grateful",
    "ness": "goodness kindness darkness happiness",
    "al": "revival arrival approval festival",
    "ance": "allowance performance insurance guidance",
    "ence": "inference difference experience conference",
    "er": "airliner teacher computer gardener",
    "ic": "gyroscopic electric romantic fantastic",
    "able": "adjustable comfortable reliable valuable",
    "ible": "defensible flexible terrible horrible",
    "ant": "irritant assistant important pleasant",
    "ement": "replacement agreement management settlement",
    "ment": "adjustment treatment apartment government",
    "ent": "dependent student different parent",
    "ion": "adoption decision discussion question vision session",
    "ou": "bayou caribou bijou",
    "ism": "communism criticism tourism optimism",
    "ate": "activate celebrate estimate appreciate probate",
    "iti": "humidity validity stupidity rapidity acidity",
    "ous": "homologous famous nervous dangerous jealous",
    "ive": "effective expensive active massive",
    "ize": "bowdlerize memorize apologize recognize summarize",
    "ing": "motoring sing running hoping filing falling sizing hopping hissing failing flying dying lying tying eyeing",
    "ed": "plastered bled conflated troubled sized hopped tanned fizzed failed filed hoped dyed eyed played trekked",
    "ies": "ponies ties cries flies skies dies lies pies studies",
    "sses": "caresses dresses glasses passes",
    "s": "cats caress gaps dogs gas this is",
    "eed": "feed agreed bleed speed proceed succeed freed deed need",
    "y": "happy sky day toy boy cry fly say by shy",
}


def test_stems_match_fts5_on_english_words() -> None:
    for suffix, listed in _ENGLISH.items():  # the list is what it says
        assert all(w.endswith((suffix, "y")) for w in listed.split()), suffix
    words = " ".join(_ENGLISH.values()).split()
    assert _differences(words) == []


def test_stems_cut_characters_where_fts5_does() -> None:
    # FTS5 undoubles the last two bytes of a stem, so "人" (e4 ba ba) loses a byte and two "ь"
    # (d1 8c d1 8c) do not end in a double; the last three are controls.
    words = ["a人ed", "aььed", "aььing", "yyed", "ночь", "naïvely"]
    assert _differences(words) == []


def _corpus(seed: int, size: int) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [w for text in SAMPLES for w in text.split()] + [f"w{i}" for i in range(40)]
    return [" ".join(rng.choices(vocabulary, k=rng.randint(1, 30))) for _ in range(size)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bm25_scores_match_fts5(seed: int) -> None:
    texts = _corpus(seed, 300)
    conn = _fts(texts)
    index = LexicalIndex()
    index.add(list(range(len(texts))), texts)
    rng = random.Random(seed)
    for _ in range(20):
        # One-token words: FTS5 reads a quoted multi-token string as a phrase, we as words.
        pool = sorted({w for t in texts[:50] for w in t.split() if len(tokenize(w)) == 1})
        words = rng.sample(pool, k=rng.randint(1, 4))
        query = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        expected = dict(conn.execute("SELECT rowid, -bm25(t) FROM t WHERE t MATCH ?", (query,)))
        ours = index.scores(words, len(texts))
        assert expected, query  # the query matches something: the comparison is not empty
        assert set(np.flatnonzero(ours > 0).tolist()) == set(expected)
        for doc, score in expected.items():
            assert ours[doc] == pytest.approx(score, rel=1e-5)


def test_documents_added_in_batches_score_as_one_batch() -> None:
    texts = _corpus(9, 120)
    whole, pieces = LexicalIndex(), LexicalIndex()
    whole.add(list(range(120)), texts)
    for start in range(0, 120, 7):
        chunk = list(range(start, min(start + 7, 120)))
        pieces.add(chunk, [texts[i] for i in chunk])
    for word in ("running", "w3", "party", "absent-word"):
        np.testing.assert_allclose(pieces.scores([word], 120), whole.scores([word], 120))
    assert whole.scores(["w3"], 120).max() > 0  # positive control: the word is in the corpus
    assert whole.scores(["absent-word"], 120).max() == 0


def test_document_frequency_counts_documents_not_occurrences() -> None:
    index = LexicalIndex()
    index.add([0, 1, 2], ["cats cats cats", "a cat sat", "a dog"])
    assert index.document_frequency("cat") == 2  # "cats" and "cat" share a stem
    assert index.document_frequency("dog") == 1
    assert index.document_frequency("bird") == 0


def test_documents_without_a_word_are_counted_and_match_nothing() -> None:
    index = LexicalIndex()
    index.add([0], ["👍"])  # a batch with no word at all
    index.add([1, 2, 3], ["...", "the cat sat", "?!"])
    assert index.scores(["cat"], 4).tolist()[:2] == [0.0, 0.0] and index.scores(["cat"], 4)[2] > 0
    assert index.document_frequency("cat") == 1
    assert index.scores(["👍"], 4).max() == 0  # nothing to match, and no error
