"""BM25 over an in-memory inverted index of one scope.

SQLite FTS5 scores every row that matches any query word before it can return the best ten,
which cost 10 ms a query at 10k memories (bench/RESULTS.md). Here each word of a scope keeps
its postings in two growing arrays, so a query costs one vectorised pass per word over the rows
that contain it. Words are made the way FTS5's ``porter unicode61 remove_diacritics 2``
tokenizer makes them (the stems by core/porter.py, a port of FTS5's own stemmer), and scores
follow FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, IDF floored at 1e-6); tests/core/test_lexical.py
checks both against FTS5 itself. Document statistics are the scope's own: the scope is the
corpus a query searches.

Pure text analysis, no I/O: recall weighs query words with ``bm25_idf`` and SQLite's in-memory
scope copy (storage/sqlite/scope_copy.py) keeps a ``LexicalIndex`` per scope.
"""

from __future__ import annotations

import math
import re
import unicodedata
from array import array
from collections.abc import Sequence

import numpy as np

from engramdb.core import porter

K1 = 1.2
B = 0.75
_IDF_FLOOR = 1e-6  # FTS5's floor for a word in more than half the documents
_TOKEN = re.compile(r"[^\W_]+")  # unicode61: runs of letters and digits; "_" separates


def _fold(text: str) -> str:
    """Lower-case and strip diacritics (a combining mark would otherwise split a word)."""
    text = text.lower()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


# ASCII fast path (most text): one C-level pass lower-cases letters and blanks separators.
_ASCII = bytes(
    c + 32 if 65 <= c <= 90 else c if c < 128 and chr(c).isalnum() else 32 for c in range(256)
)


def _words(text: str) -> list[str]:
    if text.isascii():
        return text.encode().translate(_ASCII).decode().split()
    return _TOKEN.findall(_fold(text))


def _stems(words: Sequence[str]) -> list[str]:
    return list(map(porter.stem, words))


def bm25_idf(documents: int, frequency: int) -> float:
    """Return a word's inverse document frequency as FTS5's bm25() computes it."""
    idf = math.log((documents - frequency + 0.5) / (frequency + 0.5))
    return idf if idf > 0 else _IDF_FLOOR


def tokenize(text: str) -> list[str]:
    """Return the index terms of ``text``, in order, as FTS5's porter tokenizer makes them."""
    return _stems(_words(text))


class LexicalIndex:
    """Postings of one scope's documents, addressed by the caller's row positions."""

    def __init__(self) -> None:
        self._term_ids: dict[str, int] = {}  # stem -> term id
        self._word_ids: dict[str, int] = {}  # folded word -> term id (stems each word once)
        self._positions: list[array[int]] = []  # by term id: positions holding the term
        self._counts: list[array[float]] = []  # by term id: how often, at each position
        self._lengths = array("i")
        self._documents = 0
        self._total_length = 0

    def add(self, positions: Sequence[int], texts: Sequence[str]) -> None:
        """Index new documents (a position is added once: texts never change), in one pass."""
        if not positions:
            return
        flat: list[str] = []
        sizes: list[int] = []
        for text in texts:  # one flat list: a list per document would keep the GC busy
            words = _words(text)
            flat += words
            sizes.append(len(words))
        lengths = np.array(sizes, dtype=np.int64)
        self._learn(flat)
        term = np.fromiter(map(self._word_ids.__getitem__, flat), dtype=np.int64, count=len(flat))
        at = np.repeat(np.asarray(positions, dtype=np.int64), lengths)
        # One sort groups the batch by (term, position); run lengths are the term counts.
        span = int(at.max(initial=0)) + 1
        keys, counts = np.unique(term * span + at, return_counts=True)
        terms, places = keys // span, (keys % span).astype(np.int32)
        starts = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]])
        # A batch with no word at all (an emoji, "...") has no postings, only lengths.
        for start, end in zip(starts, [*starts[1:], len(keys)], strict=True) if len(keys) else ():
            t = int(terms[start])
            self._positions[t].frombytes(places[start:end].tobytes())
            self._counts[t].frombytes(counts[start:end].astype(np.float32).tobytes())
        top = max(positions)
        if top >= len(self._lengths):
            self._lengths.frombytes(bytes(4 * (top + 1 - len(self._lengths))))
        for position, length in zip(positions, lengths.tolist(), strict=True):
            self._lengths[position] = length
        self._documents += len(positions)
        self._total_length += int(lengths.sum())

    def _learn(self, words: Sequence[str]) -> None:
        """Give every word not seen before the id of its stem."""
        new = [w for w in set(words) if w not in self._word_ids]
        for word, stem in zip(new, _stems(new), strict=True):
            term = self._term_ids.get(stem)
            if term is None:
                term = self._term_ids[stem] = len(self._term_ids)
                self._positions.append(array("i"))
                self._counts.append(array("f"))
            self._word_ids[word] = term

    def document_frequency(self, word: str) -> int:
        """Return how many documents contain ``word`` once it is tokenized like the documents."""
        terms = [self._term_ids.get(stem) for stem in tokenize(word)]
        return max((len(self._positions[t]) for t in terms if t is not None), default=0)

    def scores(self, words: Sequence[str], size: int) -> np.ndarray:
        """Return the BM25 score of every position below ``size`` (0 where no word matches)."""
        scores = np.zeros(size, dtype=np.float64)
        if not self._documents:
            return scores
        lengths = np.frombuffer(self._lengths, dtype=np.int32)
        average = self._total_length / self._documents
        for word in words:
            for stem in tokenize(word):  # every query token counts, as in an FTS5 OR query
                term = self._term_ids.get(stem)
                if term is None:
                    continue
                positions = np.frombuffer(self._positions[term], dtype=np.int32)
                counts = np.frombuffer(self._counts[term], dtype=np.float32).astype(np.float64)
                frequency = len(positions)
                idf = bm25_idf(self._documents, frequency)
                norm = K1 * (1 - B + B * lengths[positions] / average)
                scores[positions] += idf * counts * (K1 + 1) / (counts + norm)
        return scores
