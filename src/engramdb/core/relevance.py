"""How well a memory matches a query on an absolute scale, and the filters recall applies by record.

The fused score ranks; it does not measure. Its arms are min-max normalised per query, so the
best of a scope's candidates scores near 1 however unrelated it is ("tax deadline" asked of a
scope that holds only "the dog is named Rex"). ``relevance`` is what ``minScore`` compares
instead: the larger of the memory's cosine with the query (the dense arm's raw score) and its
lexical evidence, the share of the query's word information (BM25's IDF) that the memory's own
words carry (its text, and a fact's subject and kind, as the lexical arm indexes them). Both are
in [0, 1] whatever the scope holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from engramdb import clock
from engramdb.lexical.body import lexical_text
from engramdb.lexical.index import pieces, stem_weights, stems_present, tokenize
from engramdb.storage.port import MemoryRecord, TenantStore


@dataclass(frozen=True)
class Narrowing:
    """Filters on a memory's own fields (beyond scope and lifecycle), and the relevance floor."""

    kinds: frozenset[str] | None = None
    subject_key: str | None = None
    subject_prefix: str | None = None
    session_id: str | None = None
    after: str | None = None  # observedAt on or after (facts: validFrom)
    before: str | None = None  # observedAt before
    min_score: float | None = None

    @property
    def filters(self) -> bool:
        """True when some record filter is set (the relevance floor aside)."""
        return any(
            v is not None
            for v in (self.kinds, self.subject_key, self.subject_prefix, self.session_id, self.after, self.before)
        )

    def keeps(self, record: MemoryRecord) -> bool:
        """True when ``record`` passes every record filter."""
        if self.kinds is not None and record.kind not in self.kinds:
            return False
        if self.subject_key is not None and record.subject_key != self.subject_key:
            return False
        if self.subject_prefix is not None and not (record.subject_key or "").startswith(self.subject_prefix):
            return False
        if self.session_id is not None and record.session_id != self.session_id:
            return False
        observed = clock.parse(record.observed_at)
        if self.after is not None and observed < clock.parse(self.after):
            return False
        return not (self.before is not None and observed >= clock.parse(self.before))


@dataclass(frozen=True)
class QueryWords:
    """The query's words with their IDF in the scope: what lexical evidence is weighed by."""

    stems: Mapping[str, float]  # stem -> IDF (the larger, when two words share a stem)
    size: int = 0  # how many memories the scope holds (0 when the query has no words to count)
    spellings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # stem -> the query's words

    @classmethod
    def of(cls, words: Sequence[str], size: int, frequencies: Mapping[str, int]) -> QueryWords:
        spellings: dict[str, tuple[str, ...]] = {}
        for word in words:
            for piece in pieces(word):  # "x_y" is two words to both indexes
                for stem in tokenize(piece):
                    spellings[stem] = (*spellings.get(stem, ()), piece)
        return cls(stem_weights(words, size, frequencies), size, spellings)

    def evidence(self, text: str) -> float:
        """The share of the query's word information that ``text`` contains (0 to 1)."""
        total = sum(self.stems.values())
        if total <= 0:
            return 0.0
        present = stems_present(text, self.stems)
        return sum(idf for stem, idf in self.stems.items() if stem in present) / total

    def body_evidence(self, record: MemoryRecord) -> float:
        """``evidence`` of what the lexical arm indexes of ``record``: its text, and a fact's
        subject and kind (lexical/body.py), as the scope's index holds it."""
        return self.evidence(lexical_text(record.text, record.subject_key, record.kind))


def indexed_evidence(
    store: TenantStore, scope_key: str, words: QueryWords, records: Iterable[MemoryRecord]
) -> dict[int, float]:
    """The memories' lexical evidence, read from what the store keeps of each indexed body (a
    scope copy's index; PostgreSQL's tsvector for a small scope), in one read. Stemming each body
    again on each recall let a writer make one recall take seconds with long texts of new words
    (bench/RESULTS.md); rows the store leaves out are read with ``QueryWords.body_evidence``."""
    rowids = [r.rowid for r in records]
    if not rowids or sum(words.stems.values()) <= 0:
        return {}
    return store.word_evidence(scope_key, words.stems, rowids, words.spellings)


def relevance(cosine: float | None, words: QueryWords, record: MemoryRecord, evidence: float | None = None) -> float:
    """A memory's absolute match with the query: max(cosine, lexical evidence), in [0, 1]
    (``evidence``: the lexical evidence when it is already known, as ``indexed_evidence`` gives it)."""
    lexical = words.body_evidence(record) if evidence is None else evidence
    return max(0.0, min(1.0, max(cosine or 0.0, lexical)))
