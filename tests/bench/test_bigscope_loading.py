"""The big-scope benchmark's bulk loader leaves the rows the write path leaves, on both backends.

It is a benchmark's path, not a write path, but a benchmark that cannot load measures nothing:
when the audit log gained two columns the loaders kept their old placeholder counts and
`engram bench bigscope` failed on both backends with no test to say so.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest

from engramdb.core.embedding import l2_normalize
from engramdb.errors import EngramError
from engramdb_bench.bigscope_corpus import BaseTurn, Corpus
from engramdb_bench.bigscope_load import same_rows
from engramdb_bench.bigscope_model import Target


def _corpus(turns: int = 60) -> Corpus:
    rng = np.random.default_rng(5)
    base = [
        BaseTurn(
            f"Speaker {i % 3}: turn {i} about the garden and {i * 7} tomatoes",
            f"s{i // 10}",
            f"2024-05-{1 + i // 10:02d}T10:00:00Z",
            ("Speaker",),
        )
        for i in range(turns)
    ]
    vectors = l2_normalize(rng.standard_normal((turns, 384)).astype(np.float32))
    questions = [f"what about turn {i}?" for i in range(0, turns, 6)]
    return Corpus(base, vectors, questions, vectors[::6].copy(), "bench-model", 0.0)


def _target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Target:
    if backend == "sqlite":
        return Target("sqlite", tmp_path / "home")
    return Target(
        "postgres", tmp_path / "home", url=request.getfixturevalue("pg_url"), schema=f"b_{uuid.uuid4().hex[:12]}"
    )


def test_bulk_load_and_the_write_path_leave_the_same_rows(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    seen: list[str] = []
    check = same_rows(_corpus(), _target(backend, tmp_path, request), seen.append, n=120)
    assert check["rows"] == 120 and seen  # rows were written both ways (copies of the 60 turns too)
    assert check["identical"], check["differences"]


def test_the_timed_recalls_search_both_arms(tmp_path: Path) -> None:
    """The in-process recalls ask with the stored vectors' model: asked with another name, recall
    reads no vectors and every number it gives is the lexical arm's alone (it happened)."""
    from engramdb_bench import bigscope as big
    from engramdb_bench.bigscope_load import bulk_load
    from engramdb_bench.bigscope_model import Asked, Layout

    corpus, target, layout = _corpus(), Target("sqlite", tmp_path / "home"), Layout(240, 2)
    store = target.open()
    try:
        bulk_load(store, corpus, layout, lambda line: None)
    finally:
        store.close()
    asked = Asked.draw(corpus, layout, 8, seed=3)
    assert asked.embedder().model_id == corpus.model
    _, exact_tops = big._exact_tops(target, asked)
    result = big._in_process(target, asked, lambda line: None, exact_tops)
    assert result["recall"]["denseCandidatesMean"] > 0  # the vector arm found rows
    assert result["recallAt10VsExact"] == 1.0 and all(exact_tops)  # exact below the list size, and not empty
    renamed = Asked(asked.scopes, asked.texts, asked.vectors, asked.layout_scopes, "another-model")
    with pytest.raises(EngramError, match="vector arm found nothing"):  # the positive control: the check bites
        big._in_process(target, renamed, lambda line: None, exact_tops)
