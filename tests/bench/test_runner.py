"""The harness end to end on a small slice (hashing embedder), and its scoring of one ranking."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engramdb.config import RetrievalSettings
from engramdb_bench.datasets import Question
from engramdb_bench.documents import Document
from engramdb_bench.runner import EvalConfig, arm_settings, run
from engramdb_bench.scoring import score

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench"
LOCOMO = BENCH / "locomo" / "locomo10.json"
LME = BENCH / "longmemeval" / "sample"

needs_data = pytest.mark.skipif(not LOCOMO.exists() or not LME.exists(), reason="../shared/bench not found")


def _doc(doc_id: str, session: str, *turns: str) -> Document:
    return Document(doc_id, session, turns or (doc_id,), "text", "", "2023-01-01T00:00:00Z")


def test_score_reads_turns_from_documents_and_sessions_from_the_session_ranking() -> None:
    q = Question("q", "?", "multi-hop", frozenset({"D1:2", "D3:1"}), frozenset({"D1", "D3"}))
    ranked = [_doc("D2:1", "D2"), _doc("D1:2", "D1"), _doc("D2:5", "D2"), _doc("D3:1", "D3")]
    s = score(q, ranked, ["D2", "D1", "D3"], (1, 2, 3, 20))
    assert s["turnRecall@1"] == 0.0 and s["turnRecall@2"] == 0.5 and s["turnRecall@20"] == 1.0
    assert s["sessionsRetrieved"] == 3.0
    assert s["sessionRecallAny@2"] == 1.0 and s["sessionRecallAll@2"] == 0.0 and s["sessionRecallAll@3"] == 1.0
    assert s["sessionMrr"] == 0.5
    assert s["sessionNdcg@3"] == pytest.approx((1 / 1.5849625 + 0.5) / (1 + 1 / 1.5849625), abs=1e-6)


def test_arms_are_retrieval_settings() -> None:
    base = RetrievalSettings(dense_weight=0.6, lexical_weight=0.4, fusion="rrf")
    assert (arm_settings("bm25", base).dense_weight, arm_settings("bm25", base).lexical_weight) == (0.0, 1.0)
    assert (arm_settings("vector", base).dense_weight, arm_settings("vector", base).lexical_weight) == (1.0, 0.0)
    assert arm_settings("vector", base).fusion == "weighted"
    assert arm_settings("bm25", base).neighbour_weight == arm_settings("vector", base).second_neighbour_weight == 0.0
    assert arm_settings("bm25", base).date_weight == arm_settings("vector", base).date_weight == 0.0
    assert base.neighbour_weight > 0 and base.date_weight > 0  # the production setting keeps them
    assert arm_settings("hybrid", base) == base
    with pytest.raises(ValueError):
        arm_settings("splade", base)


@needs_data
def test_locomo_slice_end_to_end(tmp_path: Path) -> None:
    config = EvalConfig(
        dataset="locomo",
        data=LOCOMO,
        arms=("bm25", "vector", "hybrid"),
        limit_conversations=1,
        limit_questions=40,
        embedder="hashing",
        home=tmp_path / "home",
    )
    result = run(config)
    counts = result["counts"]
    assert counts["conversations"] == 1 and counts["questionsAsked"] == 40
    assert counts["documents"] == counts["episodes"] == 419
    assert counts["questionsSkipped"] == {"no usable evidence": 2}
    # ingested and embedded once, shared by the three arms
    assert result["ingest"]["episodesCreated"] == result["ingest"]["episodesEmbedded"] == 419
    assert set(result["arms"]) == {"bm25", "vector", "hybrid"}
    assert result["groups"]["all"] == [
        g for g in ("multi-hop", "temporal", "open-domain", "single-hop") if g in result["groups"]
    ]
    for arm in result["arms"].values():
        everything = arm["groups"]["all"]
        assert everything["n"] == 40
        for k in (1, 5, 10, 20):
            for key in ("turnRecall", "sessionRecallAny", "sessionRecallAll", "sessionNdcg"):
                assert 0.0 <= everything[f"{key}@{k}"] <= 1.0
        assert everything["turnRecall@1"] <= everything["turnRecall@20"]
        assert arm["latencyMs"]["p50"] > 0 and arm["latencyMs"]["p95"] >= arm["latencyMs"]["p50"]
    hybrid = result["arms"]["hybrid"]["groups"]["all"]
    assert hybrid["turnRecall@10"] > 0.2 and hybrid["sessionRecallAny@10"] > 0.5
    first = result["questions"][0]
    assert first["goldTurns"] == ["D1:3"] and len(first["arms"]["hybrid"]["retrieved"]) == 20
    assert first["arms"]["bm25"]["metrics"]["turnRecall@5"] == 1.0  # "LGBTQ support group" is in D1:3

    again = run(config)  # same home: the rows exist, nothing is embedded twice
    assert again["ingest"]["episodesCreated"] == 0 and again["ingest"]["episodesEmbedded"] == 0
    assert again["arms"]["hybrid"]["groups"]["all"] == result["arms"]["hybrid"]["groups"]["all"]


@needs_data
def test_cli_longmemeval_on_a_folder(tmp_path: Path) -> None:
    from engramdb.cli.main import app

    data = tmp_path / "lme"
    data.mkdir()
    for name in ("45_118b2229.json", "46_0e5e2d1a.json"):  # single-session-user, and one skipped
        (data / name).write_bytes((LME / name).read_bytes())
    out = tmp_path / "out.json"
    md = tmp_path / "out.md"
    done = CliRunner().invoke(
        app,
        [
            "eval",
            "longmemeval",
            "--data",
            str(data),
            "--embedder",
            "hashing",
            "--arms",
            "bm25,hybrid",
            "--out",
            str(out),
            "--markdown",
            str(md),
        ],
    )
    assert done.exit_code == 0, done.output
    result = json.loads(out.read_text())
    assert result["counts"]["questionsAsked"] == 1
    assert result["counts"]["questionsSkipped"] == {"no user-turn evidence": 1}
    assert result["counts"]["conversationsWithoutScorableQuestions"] == 1  # its haystack is not ingested
    assert list(result["arms"]) == ["bm25", "hybrid"]
    assert result["groups"] == {"all": ["single-session-user"], "single-session-user": ["single-session-user"]}
    assert "sessionRecallAll@5" in result["arms"]["hybrid"]["groups"]["all"]
    assert "| metric (all) |" in md.read_text() and "turn-level" in done.output


def test_cli_refuses_an_unknown_arm(tmp_path: Path) -> None:
    from engramdb.cli.main import app

    data = tmp_path / "x.json"
    data.write_text("[]")
    done = CliRunner().invoke(app, ["eval", "locomo", "--data", str(data), "--arms", "bm25,splade"])
    assert done.exit_code != 0 and "arms" in done.output


HELDOUT = Path(__file__).resolve().parents[2] / "bench" / "heldout" / "conversations.json"


def test_cli_scores_recall_at_the_depths_asked(tmp_path: Path) -> None:
    from engramdb.cli.main import app

    out = tmp_path / "out.json"
    common = ["eval", "locomo", "--data", str(HELDOUT), "--embedder", "hashing", "--arms", "hybrid"]
    done = CliRunner().invoke(
        app,
        [*common, "--limit-conversations", "1", "--limit-questions", "3", "--ks", "50,3", "--out", str(out)],
    )
    assert done.exit_code == 0, done.output
    result = json.loads(out.read_text())
    assert result["config"]["ks"] == [3, 50]
    scores = result["arms"]["hybrid"]["groups"]["all"]
    assert "turnRecall@3" in scores and "turnRecall@50" in scores
    assert "turnRecall@10" not in scores  # the default depths are not scored too
    assert max(len(q["arms"]["hybrid"]["retrieved"]) for q in result["questions"]) > 20  # it asked for 50
    for bad in ("0,10", "51", "ten"):
        refused = CliRunner().invoke(app, [*common, "--ks", bad, "--out", str(tmp_path / "no.json")])
        assert refused.exit_code == 2 and "--ks" in refused.output, (bad, refused.output)
    assert not (tmp_path / "no.json").exists()


def test_rest_gives_the_numbers_the_service_gives(tmp_path: Path) -> None:
    """Through a real server's REST API (own server on loopback) the held-out slice scores
    exactly as through the service in process: the eval measures the production path."""
    common = EvalConfig(
        dataset="locomo", data=HELDOUT, arms=("hybrid",), limit_conversations=1, limit_questions=12, embedder="hashing"
    )
    direct = run(replace(common, home=tmp_path / "direct"))
    rest = run(replace(common, home=tmp_path / "rest", rest=True))
    assert rest["counts"]["questionsAsked"] == direct["counts"]["questionsAsked"] == 12
    assert rest["ingest"]["episodesCreated"] == rest["ingest"]["episodesEmbedded"] > 100
    assert rest["arms"]["hybrid"]["groups"]["all"]["turnRecall@20"] > 0  # it found evidence
    assert rest["arms"]["hybrid"]["groups"] == direct["arms"]["hybrid"]["groups"]
    assert [q["arms"]["hybrid"]["retrieved"] for q in rest["questions"]] == [
        q["arms"]["hybrid"]["retrieved"] for q in direct["questions"]
    ]


def test_rest_measures_the_server_settings_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="arms hybrid"):
        EvalConfig(dataset="locomo", data=HELDOUT, arms=("bm25", "hybrid"), rest=True).validate()
    with pytest.raises(ValueError, match="--key"):
        EvalConfig(dataset="locomo", data=HELDOUT, arms=("hybrid",), url="http://127.0.0.1:1").validate()
