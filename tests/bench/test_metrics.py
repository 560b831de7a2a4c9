"""Metric functions on cases checked by hand."""

from __future__ import annotations

import math

import pytest

from engramdb_bench import metrics
from engramdb_bench.datasets import locomo_category


def test_evidence_ids_split_on_semicolons_commas_and_spaces() -> None:
    assert metrics.parse_evidence(["D8:6; D9:17"]) == ["D8:6", "D9:17"]
    assert metrics.parse_evidence(["D9:1 D4:4 D4:6", "D1:3,D1:4"]) == ["D9:1", "D4:4", "D4:6", "D1:3", "D1:4"]
    assert metrics.parse_evidence(["D2:1", "D2:1;D2:1"]) == ["D2:1"]  # repeats once
    assert metrics.parse_evidence([]) == []


def test_evidence_ids_are_normalised_and_junk_kept_for_the_caller_to_drop() -> None:
    assert metrics.parse_evidence(["D30:05", "D:11:26"]) == ["D30:5", "D11:26"]
    assert metrics.parse_evidence(["D", " ; "]) == ["D"]


def test_locomo_categories_follow_the_official_mapping() -> None:
    assert [locomo_category(n) for n in (1, 2, 3, 4, 5)] == [
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "adversarial",
    ]
    assert locomo_category("4") == "single-hop"
    with pytest.raises(ValueError):
        locomo_category(6)


def test_evidence_recall_is_the_fraction_of_gold_turns_covered() -> None:
    ranked = [("D1:1",), ("D1:2", "D1:3"), ("D2:1",)]
    gold = {"D1:3", "D2:1", "D9:9"}
    assert metrics.evidence_recall(ranked, gold, 1) == 0.0
    assert metrics.evidence_recall(ranked, gold, 2) == pytest.approx(1 / 3)
    assert metrics.evidence_recall(ranked, gold, 3) == pytest.approx(2 / 3)
    assert metrics.evidence_recall(ranked, gold, 20) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        metrics.evidence_recall(ranked, set(), 5)


def test_recall_any_and_all() -> None:
    ranked = ["s3", "s1", "s7", "s2"]
    assert metrics.recall_any(ranked, {"s1", "s2"}, 1) == 0.0
    assert metrics.recall_any(ranked, {"s1", "s2"}, 2) == 1.0
    assert metrics.recall_all(ranked, {"s1", "s2"}, 2) == 0.0
    assert metrics.recall_all(ranked, {"s1", "s2"}, 3) == 0.0
    assert metrics.recall_all(ranked, {"s1", "s2"}, 4) == 1.0
    assert metrics.recall_all(ranked, {"s1", "s9"}, 10) == 0.0


def test_ndcg_known_values() -> None:
    # gold at ranks 1 and 3 of 3: (1 + 1/log2 4) / (1 + 1/log2 3) = 1.5 / 1.6309
    assert metrics.ndcg(["a", "x", "b"], {"a", "b"}, 3) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert metrics.ndcg(["a", "x", "b"], {"a", "b"}, 3) == pytest.approx(0.919721, abs=1e-6)
    # one gold item at rank 2: 1/log2(3) over an ideal of 1
    assert metrics.ndcg(["x", "a"], {"a"}, 2) == pytest.approx(0.630930, abs=1e-6)
    assert metrics.ndcg(["x", "a"], {"a"}, 1) == 0.0
    assert metrics.ndcg(["a", "b"], {"a", "b"}, 10) == pytest.approx(1.0)
    # the ideal is capped at k: two gold items, k=1, first is gold
    assert metrics.ndcg(["b", "x"], {"a", "b"}, 1) == pytest.approx(1.0)


def test_reciprocal_rank() -> None:
    assert metrics.reciprocal_rank(["x", "y", "a"], {"a", "z"}) == pytest.approx(1 / 3)
    assert metrics.reciprocal_rank(["a"], {"a"}) == 1.0
    assert metrics.reciprocal_rank(["x", "y"], {"a"}) == 0.0


def test_first_occurrences_keeps_the_best_rank() -> None:
    assert metrics.first_occurrences(["s2", "s1", "s2", "s3", "s1"]) == ["s2", "s1", "s3"]


def test_percentile_and_mean() -> None:
    assert metrics.percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0
    assert metrics.percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert metrics.percentile(list(map(float, range(1, 101))), 95) == pytest.approx(95.05)
    assert math.isnan(metrics.percentile([], 50))
    assert metrics.mean([1.0, 0.0, 0.5]) == pytest.approx(0.5)
