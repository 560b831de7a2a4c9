"""BM25 over an in-memory inverted index of one scope.

SQLite FTS5 scores every row that matches any query word before it can return the best ten,
which cost 10 ms a query at 10k memories (bench/RESULTS.md). Here a scope's postings are integer
arrays grouped by term, so a query costs one vectorised pass per word over the rows that contain
it; a term is its stem's hash, and a bounded ``Vocabulary`` every scope shares remembers the
terms of the words it saw lately. Words are made the way FTS5's ``porter unicode61
remove_diacritics 2`` tokenizer makes them (the stems by lexical/porter.py, a port of FTS5's own
stemmer), and scores follow FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, IDF floored at 1e-6);
tests/core/test_lexical.py checks both against FTS5 itself.
Document statistics are the scope's own: the scope is the corpus a query searches.

Pure text analysis, no I/O: recall weighs query words with ``bm25_idf`` and SQLite's in-memory
scope copy (storage/scope_copy.py) keeps a ``LexicalIndex`` per scope.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engramdb.lexical import porter

K1 = 1.2
B = 0.75
_IDF_FLOOR = 1e-6  # FTS5's floor for a word in more than half the documents
_TOKEN = re.compile(r"[^\W_]+")  # unicode61: runs of letters and digits; "_" separates


def pieces(text: str) -> list[str]:
    """The runs of letters and digits the index splits ``text`` into, as written (not folded)."""
    return _TOKEN.findall(text)


def _fold(text: str) -> str:
    """Lower-case and strip diacritics (a combining mark would otherwise split a word)."""
    text = text.lower()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


# ASCII fast path (most text): one C-level pass lower-cases letters and blanks separators.
_ASCII = bytes(c + 32 if 65 <= c <= 90 else c if c < 128 and chr(c).isalnum() else 32 for c in range(256))


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


def stems_present(text: str, stems: Collection[str]) -> set[str]:
    """Return the ``stems`` that some word of ``text`` stems to: ``set(tokenize(text)) & stems``,
    with only the words that start like one of them stemmed. A long text of made-up words took
    seconds to stem whole (bench/RESULTS.md); words that do start like one are all still stemmed."""
    wanted = set(stems)
    if not wanted:
        return set()
    roots = tuple({_root(stem) for stem in wanted})
    words = set(_words(text))
    candidates = words if "" in roots else [w for w in words if w.startswith(roots)]
    return wanted.intersection(map(porter.stem, candidates))


def _root(stem: str) -> str:
    """What every word that stems to ``stem`` starts with: all of it but ``_REWRITTEN`` characters
    at its end, and at least its first. Porter rewrites only a word's end and never its first
    letter. What it writes there that the word lacks is one letter in all the words tried ("-y" to
    "-i"; steps 4 and 5 take back the "e" of "-ate" and "-ble"). FTS5's cut of a doubled byte ends
    the stem at once, leaving a broken character of up to three bytes, each kept as one escaped
    character. tests/core/test_stems_present.py checks this against ``tokenize``."""
    return stem[: max(1, len(stem) - _REWRITTEN)]


_REWRITTEN = 3  # characters at a stem's end that need not be its word's (a broken 4-byte character)


def stem_weights(words: Sequence[str], documents: int, frequencies: Mapping[str, int]) -> dict[str, float]:
    """Return each stem of the query ``words`` with its IDF among ``documents`` (the larger, when
    two words share a stem); ``frequencies`` counts the documents holding each word."""
    stems: dict[str, float] = {}
    for word in words:
        for stem in tokenize(word):
            stems[stem] = max(stems.get(stem, 0.0), bm25_idf(max(documents, 1), frequencies.get(word, 0)))
    return stems


WORDS_KEPT = 1 << 17  # folded words whose term id a vocabulary remembers (a miss stems the word again)


def term_id(stem: str) -> int:
    """Return a stem's term id: its hash (64 bits, keyed per process unless PYTHONHASHSEED fixes it).

    No table of ids: a process would keep every word any writer ever indexed (a million made-up
    words held 240 MB after their scope's copy was dropped, bench/RESULTS.md). Two stems that
    hash alike share their postings in a scope; among ten million stems that is one chance in
    300,000, and it moves scores within the scope that holds both, nowhere else.
    """
    return hash(stem)


class Vocabulary:
    """Words and their stems' term ids, shared by every scope's index in a process.

    A scope's index then holds only integers: with its own dictionaries, an index of 1,000
    turns took 1.5 MB, most of it dictionary entries and array headers (bench/RESULTS.md).
    Up to ``kept`` words keep their term id; past that the words are forgotten but the batch's at
    hand (none of them, if they alone are more), so memory stays bounded whatever is written.
    """

    def __init__(self, kept: int = WORDS_KEPT) -> None:
        self.kept = kept
        self._word_ids: dict[str, int] = {}  # folded word -> term id (stems each word once while kept)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many words are remembered now."""
        return len(self._word_ids)

    def word_terms(self, words: Sequence[str]) -> np.ndarray:
        """Return the term id of each folded word, learning the words not remembered."""
        known = self._word_ids
        try:
            return np.fromiter(map(known.__getitem__, words), dtype=np.int64, count=len(words))
        except KeyError:
            return self._learn(words)

    def _learn(self, words: Sequence[str]) -> np.ndarray:
        distinct = set(words)
        # A word's term never changes, so the new words are stemmed outside the lock (two threads
        # may both stem one word); only what is remembered is decided under it.
        learned = _terms_of(distinct - self._word_ids.keys())
        with self._lock:
            known = self._word_ids
            learned |= _terms_of(distinct - known.keys() - learned.keys())  # forgotten meanwhile
            if len(known) + len(learned) <= self.kept:
                known.update(learned)
            else:  # forget: keep this batch's words, or none if they alone are too many
                known = {w: known[w] for w in distinct - learned.keys()} | learned
                self._word_ids = known if len(known) <= self.kept else {}
        # ``known`` holds every word of the batch: a dict is only ever added to, or replaced.
        return np.fromiter(map(known.__getitem__, words), dtype=np.int64, count=len(words))


def _terms_of(words: set[str]) -> dict[str, int]:
    listed = list(words)
    return dict(zip(listed, map(term_id, _stems(listed)), strict=True))


@dataclass(frozen=True)
class _Run:
    """Postings of some documents, grouped by term: the positions of term ``terms[i]`` are
    ``positions[offsets[i]:offsets[i + 1]]``, with how often it occurs at each in ``counts``."""

    terms: np.ndarray  # int64, sorted, unique
    offsets: np.ndarray  # int64, len(terms) + 1
    positions: np.ndarray  # int32
    counts: np.ndarray  # uint16

    @classmethod
    def build(cls, terms: np.ndarray, positions: np.ndarray, counts: np.ndarray) -> _Run:
        """Group postings given in any order by term (stable: positions keep their order)."""
        order = np.argsort(terms, kind="stable")
        terms, positions, counts = terms[order], positions[order], counts[order]
        starts = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]]) if len(terms) else np.zeros(0, np.int64)
        offsets = np.r_[starts, len(terms)].astype(np.int64)
        return cls(terms[starts], offsets, positions.astype(np.int32), counts.astype(np.uint16))

    def __len__(self) -> int:
        return len(self.positions)

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        i = int(np.searchsorted(self.terms, term))
        if i == len(self.terms) or self.terms[i] != term:
            return _NO_POSITIONS, _NO_COUNTS
        start, end = self.offsets[i], self.offsets[i + 1]
        return self.positions[start:end], self.counts[start:end]

    def merged(self, other: _Run) -> _Run:
        """One run holding both runs' postings (this run's first within each term)."""
        widths = np.diff(self.offsets), np.diff(other.offsets)
        terms = np.concatenate([np.repeat(self.terms, widths[0]), np.repeat(other.terms, widths[1])])
        return _Run.build(
            terms, np.concatenate([self.positions, other.positions]), np.concatenate([self.counts, other.counts])
        )

    @property
    def nbytes(self) -> int:
        return self.terms.nbytes + self.offsets.nbytes + self.positions.nbytes + self.counts.nbytes


_NO_POSITIONS = np.zeros(0, dtype=np.int32)
_NO_COUNTS = np.zeros(0, dtype=np.uint16)


class LexicalIndex:
    """Postings of one scope's documents, addressed by the caller's row positions.

    New documents arrive in batches; each batch becomes a run of postings grouped by term, and
    a run is merged into the one before it once it is at least a quarter of its size, so a
    scope keeps a few runs (a logarithmic number) and a write costs in proportion to its batch.
    """

    def __init__(self, vocabulary: Vocabulary | None = None) -> None:
        self._vocabulary = vocabulary if vocabulary is not None else Vocabulary()
        self._runs: list[_Run] = []
        self._lengths = np.zeros(0, dtype=np.int32)
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
        # Term ids are hashes: numbered within the batch, one sort groups it by (term, position),
        # and run lengths are the term counts.
        terms, local = np.unique(self._vocabulary.word_terms(flat), return_inverse=True)
        at = np.repeat(np.asarray(positions, dtype=np.int64), lengths)
        span = int(at.max(initial=0)) + 1
        keys, counts = np.unique(local * span + at, return_counts=True)
        if len(keys):  # a batch with no word at all (an emoji, "...") has no postings, only lengths
            self._runs.append(_Run.build(terms[keys // span], keys % span, np.minimum(counts, 65535)))
            while len(self._runs) > 1 and 4 * len(self._runs[-1]) >= len(self._runs[-2]):
                last = self._runs.pop()
                self._runs[-1] = self._runs[-1].merged(last)
        top = max(positions)
        if top >= len(self._lengths):
            grown = np.zeros(max(top + 1, 2 * len(self._lengths)), dtype=np.int32)
            grown[: len(self._lengths)] = self._lengths
            self._lengths = grown
        self._lengths[np.asarray(positions, dtype=np.int64)] = lengths
        self._documents += len(positions)
        self._total_length += int(lengths.sum())

    @property
    def nbytes(self) -> int:
        """Return the bytes the index's arrays hold (the shared vocabulary apart)."""
        return self._lengths.nbytes + sum(run.nbytes for run in self._runs)

    def _postings(self, stem: str) -> list[tuple[np.ndarray, np.ndarray]]:
        term = term_id(stem)
        return [p for p in (run.postings(term) for run in self._runs) if len(p[0])]

    def document_frequency(self, word: str) -> int:
        """Return how many documents contain ``word`` once it is tokenized like the documents."""
        return max((sum(len(p) for p, _ in self._postings(stem)) for stem in tokenize(word)), default=0)

    def weights(self, stems: Mapping[str, float], size: int) -> np.ndarray:
        """Return, for every position below ``size``, the sum of the weights of the ``stems`` its
        document holds (0 where it holds none)."""
        summed = np.zeros(size, dtype=np.float64)
        for stem, weight in stems.items():
            for positions, _ in self._postings(stem):
                summed[positions[positions < size]] += weight  # a position holds a term once per run
        return summed

    def scores(self, words: Sequence[str], size: int) -> np.ndarray:
        """Return the BM25 score of every position below ``size`` (0 where no word matches)."""
        scores = np.zeros(size, dtype=np.float64)
        if not self._documents:
            return scores
        average = self._total_length / self._documents
        for word in words:
            for stem in tokenize(word):  # every query token counts, as in an FTS5 OR query
                postings = self._postings(stem)
                if not postings:
                    continue
                idf = bm25_idf(self._documents, sum(len(p) for p, _ in postings))
                for positions, counts in postings:
                    tf = counts.astype(np.float64)
                    norm = K1 * (1 - B + B * self._lengths[positions] / average)
                    scores[positions] += idf * tf * (K1 + 1) / (tf + norm)
        return scores
