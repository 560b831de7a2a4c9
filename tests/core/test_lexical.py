"""The in-memory lexical arm makes the words FTS5 makes and ranks as FTS5's bm25() ranks.

SQLite FTS5 is the reference: the same texts go into an FTS5 table with the tokenizer the
index imitates, and its ``fts5vocab`` words and ``bm25()`` scores are compared with ours.
"""

from __future__ import annotations

import random
import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engramdb.core.lexical import LexicalIndex, tokenize

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
