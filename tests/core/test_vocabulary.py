"""The process-wide vocabulary stays bounded whatever words are written, and forgetting words
changes no score: a term is its stem's hash, so a word learned again gets the same term."""

from __future__ import annotations

import random
import string
import threading

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engramdb.lexical import porter
from engramdb.lexical.index import LexicalIndex, Vocabulary, term_id, tokenize


def _made_up_words(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(5, 9))) for _ in range(count)]


def _fill(index: LexicalIndex, words: list[str], per_document: int, per_batch: int) -> int:
    """Index ``words`` as documents of ``per_document`` words, ``per_batch`` documents at a time."""
    texts = [" ".join(words[i : i + per_document]) for i in range(0, len(words), per_document)]
    for start in range(0, len(texts), per_batch):
        batch = list(range(start, min(start + per_batch, len(texts))))
        index.add(batch, [texts[i] for i in batch])
    return len(texts)


def test_a_flood_of_new_words_leaves_the_vocabulary_within_its_bound() -> None:
    words = _made_up_words(1, 3_000)
    bounded, unbounded = Vocabulary(kept=200), Vocabulary(kept=10**9)
    small, large = LexicalIndex(bounded), LexicalIndex(unbounded)
    size = _fill(small, words, per_document=10, per_batch=5)
    _fill(large, words, per_document=10, per_batch=5)
    assert 0 < len(bounded) <= 200
    assert len(unbounded) > 2_000  # positive control: without the bound every word stays
    for word in [*words[::97], "absent"]:  # every word scores as it would if none was forgotten
        np.testing.assert_array_equal(small.scores([word], size), large.scores([word], size))
    assert small.scores([words[0]], size)[0] > 0  # and is found


def test_a_batch_with_more_new_words_than_the_bound_keeps_none() -> None:
    vocabulary = Vocabulary(kept=10)
    index = LexicalIndex(vocabulary)
    words = _made_up_words(2, 50)
    index.add([0, 1], [" ".join(words[:25]), " ".join(words[25:])])
    assert len(vocabulary) == 0
    scores = index.scores([words[30]], 2)  # in the second document only
    assert scores[0] == 0 and scores[1] > 0
    index.add([2], ["cats"])  # a small batch is kept again
    assert len(vocabulary) == 1


def test_words_with_one_stem_share_a_term_in_every_scope() -> None:
    vocabulary = Vocabulary()
    first, second = LexicalIndex(vocabulary), LexicalIndex(vocabulary)
    first.add([0], ["the cats were running"])
    second.add([0], ["a cat runs"])
    assert len(vocabulary) > 0  # an empty vocabulary given is the one used, not a new one
    cat, cats, run, running = vocabulary.word_terms(["cat", "cats", "run", "running"]).tolist()
    assert cat == cats and run == running
    assert cat != run  # positive control: other stems, other terms
    assert second.scores(["running"], 1)[0] > 0 and first.scores(["cat"], 1)[0] > 0


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="abcdefgh ", min_size=0, max_size=40), min_size=1, max_size=25),
    kept=st.integers(min_value=0, max_value=12),
    per_batch=st.integers(min_value=1, max_value=6),
)
def test_any_bound_scores_as_no_bound(texts: list[str], kept: int, per_batch: int) -> None:
    bounded, unbounded = LexicalIndex(Vocabulary(kept=kept)), LexicalIndex(Vocabulary(kept=10**9))
    for start in range(0, len(texts), per_batch):
        batch = list(range(start, min(start + per_batch, len(texts))))
        bounded.add(batch, [texts[i] for i in batch])
        unbounded.add(batch, [texts[i] for i in batch])
    words = sorted({w for t in texts for w in t.split() if tokenize(w)})
    for word in words:
        np.testing.assert_array_equal(bounded.scores([word], len(texts)), unbounded.scores([word], len(texts)))
        assert bounded.document_frequency(word) == unbounded.document_frequency(word) > 0


def test_threads_learning_at_once_each_get_every_words_own_term() -> None:
    vocabulary = Vocabulary(kept=50)  # small: the threads make each other forget, often
    answers: list[tuple[list[str], list[int]]] = []

    def learn(seed: int) -> None:
        words = _made_up_words(seed, 600)
        for start in range(0, len(words), 15):
            batch = [*words[start : start + 15], "cats", "cat"]  # known words too, and one stem twice
            answers.append((batch, vocabulary.word_terms(batch).tolist()))

    threads = [threading.Thread(target=learn, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 4 * 40
    for batch, terms in answers:
        assert terms == [term_id(porter.stem(word)) for word in batch]
        assert terms[-1] == terms[-2]  # "cats" and "cat": one stem, one term
    assert len(vocabulary) <= 50
