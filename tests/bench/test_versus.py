"""`engram bench versus`: EngramDB's side end to end on a slice (a real `engram serve`), the check
that systems saw the same inputs, evidence recall@k, and the message when Mem0 is not installed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engramdb_bench.versus.run import Mem0UnavailableError, check_mem0
from engramdb_bench.versus.scoring import MismatchError, check_same_inputs, recall_at, server_parts, update_above

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "bench" / "locomo" / "locomo10.json"
BEAM = Path(__file__).resolve().parents[3] / "shared" / "bench" / "beam"


@pytest.mark.skipif(not LOCOMO.exists(), reason="../shared/bench not found")
def test_versus_runs_engramdb_over_http_and_scores_every_question(tmp_path: Path) -> None:
    from engramdb.cli.main import app

    out = tmp_path / "versus.json"
    done = CliRunner().invoke(
        app,
        [
            "bench",
            "versus",
            "--data",
            str(LOCOMO),
            "--systems",
            "engramdb",
            "--conversations",
            "1",
            "--questions",
            "12",
            "--embedder",
            "hashing",
            "--out",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    result = json.loads(out.read_text())
    assert result["corpus"]["turns"] == 419 and result["corpus"]["questions"] == 12
    assert result["checks"]["sameInputs"] is True
    engram = result["systems"]["engramdb"]
    assert engram["recall"]["all"]["n"] == 12 and engram["recall"]["all"]["recall@10"] > 0  # it found evidence
    assert engram["ingest"]["turns"] == 419 and engram["ingest"]["turnsPerSecond"] > 0
    assert engram["latencyMs"]["n"] == 12 and 0 < engram["latencyMs"]["p50"] <= engram["latencyMs"]["p99"]
    assert engram["peakRssMB"] > 0 and engram["diskMB"] > 0
    assert [load["phase"] for load in result["loads"]] == ["engramdb: start", "engramdb: ingest", "engramdb: recall"]
    answers = result["answers"]["engramdb"]["default"]
    assert all(len(a["turns"]) == 10 and None not in a["turns"] for a in answers.values())  # each maps to a turn
    assert "evidence recall@10, all (n=12)" in done.output and "unfair" not in done.output


@pytest.mark.skipif(not LOCOMO.exists(), reason="../shared/bench not found")
def test_the_reference_arm_is_asked_interleaved_and_every_figure_is_a_ratio(tmp_path: Path) -> None:
    from engramdb.cli.main import app

    out = tmp_path / "versus.json"
    arguments = ["--systems", "engramdb,reference", "--conversations", "1", "--questions", "8", "--embedder"]
    done = CliRunner().invoke(
        app,
        ["bench", "versus", "--data", str(LOCOMO), *arguments, "hashing", "--gaps", "0,20", "--out", str(out)],
    )
    assert done.exit_code == 0, done.output
    result = json.loads(out.read_text())
    modes = ("back to back", "after 20 ms")
    assert set(result["systems"]) == {f"{arm} ({mode})" for arm in ("engramdb", "reference") for mode in modes}
    for mode in modes:
        for arm in ("engramdb", "reference"):
            figures = result["systems"][f"{arm} ({mode})"]
            assert figures["latencyMs"]["n"] == 8 and figures["recall"]["all"]["recall@10"] > 0
        ratio = result["ratios"][f"engramdb / reference ({mode})"]
        assert set(ratio) == {"p50", "p95", "p99"} and all(v > 0 for v in ratio.values())
        parts = result["systems"][f"engramdb ({mode})"]["serverP50Ms"]  # the server's own timings, and the rest
        assert set(parts) == {"embed", "search", "rest"} and parts["search"] > 0 and parts["rest"] > 0
        assert result["systems"][f"reference ({mode})"]["serverP50Ms"] is None  # control: the reference has none
    assert result["systems"]["reference (back to back)"]["ingest"]["turns"] == 419
    assert 0 < result["ratios"]["engramdb ingest / embedder batches"]
    assert "engramdb / reference (back to back): p50" in done.output


@pytest.mark.skipif(not BEAM.exists(), reason="../shared/bench not found")
def test_versus_on_beam_writes_each_user_turn_with_its_answer_and_scores_the_newer_statement(tmp_path: Path) -> None:
    from engramdb.cli.main import app

    out = tmp_path / "versus.json"
    arguments = ["--dataset", "beam", "--data", str(BEAM), "--systems", "engramdb,reference", "--conversations", "1"]
    done = CliRunner().invoke(
        app, ["bench", "versus", *arguments, "--embedder", "hashing", "--gaps", "0", "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    result = json.loads(out.read_text())
    assert (
        result["corpus"]["dataset"] == "beam" and result["corpus"]["questions"] == 18
    )  # 20 probes less abstention's 2
    engram = result["systems"]["engramdb (back to back)"]
    assert engram["recall"]["all"]["n"] == 18 and "knowledge_update" in engram["recall"]
    assert "multi-hop" not in engram["recall"]  # control: LoCoMo's categories belong to LoCoMo
    ordered = engram["updateAboveOriginal"]
    assert ordered["n"] >= 1 and 0 <= ordered["share"] <= 1
    stored = result["answers"]["engramdb"]["back to back"]
    assert all(None not in a["turns"] for a in stored.values())  # every hit is a user turn of the corpus
    assert "BEAM: 1 conversations" in done.output and "newer above the original" in done.output


@pytest.mark.skipif(not BEAM.exists() or not LOCOMO.exists(), reason="../shared/bench not found")
def test_a_beam_turn_is_the_episode_the_sdk_writes_and_the_text_the_reference_embeds() -> None:
    from engramdb_bench.versus.corpus import build, stored_text
    from engramdb_bench.versus.engram_arm import episode, scope_of

    conv = build(BEAM, dataset="beam", conversations=1)[0]
    turn = conv["turns"][0]
    body = episode(turn, 0, scope_of(conv["id"]))
    assert body["userText"] == turn["text"] and body["assistantText"] == turn["reply"] and turn["reply"]
    assert body["trustClass"] == "mixed" and body["sourceEventId"] == turn["turn"]  # as MemorySession stores a turn
    assert body["observedAt"] == turn["observedAt"]  # the batch's time anchor, not the time of writing
    assert stored_text(turn) == f"{turn['text']}\n{turn['reply']}"
    locomo = build(LOCOMO, conversations=1)[0]["turns"][0]
    assert "reply" not in locomo and stored_text(locomo) == locomo["text"]  # control: LoCoMo's turn is its text


@pytest.mark.skipif(not BEAM.exists(), reason="../shared/bench not found")
def test_a_dataset_the_bench_does_not_know_is_refused_by_name() -> None:
    from engramdb_bench.versus.run import VersusConfig

    with pytest.raises(ValueError, match="dataset must be one of locomo, beam"):
        VersusConfig(data=LOCOMO, dataset="longmemeval").validate()
    with pytest.raises(ValueError, match="no BEAM tier folder"):
        VersusConfig(data=BEAM, dataset="beam", tier="7K").validate()
    VersusConfig(data=BEAM, dataset="beam").validate()  # control: the shared tier is valid


def test_the_reference_arm_needs_engramdb_beside_it() -> None:
    from engramdb_bench.versus.run import VersusConfig

    with pytest.raises(ValueError, match="interleaved with engramdb"):
        VersusConfig(data=LOCOMO, systems=("reference",)).validate()
    VersusConfig(data=LOCOMO, systems=("engramdb", "reference")).validate()  # control: with it, it is valid


def test_systems_are_compared_only_on_the_same_inputs() -> None:
    questions = {"q1": ["c1", ["D1:1"]], "q2": ["c1", ["D1:2", "D1:3"]]}
    answers = {"default": {"q1": {"turns": ["D1:1"]}, "q2": {"turns": ["D1:3", "D1:9"]}}}
    view = {"stored": {"c1": ["D1:1", "D1:2", "D1:3"]}, "questions": questions, "answers": answers}
    assert check_same_inputs({"a": view, "b": view})["sameInputs"] is True
    other_evidence = {**view, "questions": {**questions, "q2": ["c1", ["D1:2"]]}}
    with pytest.raises(MismatchError, match="questions"):
        check_same_inputs({"a": view, "b": other_evidence})
    with pytest.raises(MismatchError, match="stored"):
        check_same_inputs({"a": view, "b": {**view, "stored": {"c1": ["D1:1", "D1:2"]}}})
    with pytest.raises(MismatchError, match="answered"):
        check_same_inputs({"a": view, "b": {**view, "answers": {"default": {"q1": {"turns": []}}}}})


def test_evidence_recall_is_the_share_of_gold_turns_in_the_first_k() -> None:
    questions = {"q1": ["c1", ["D1:1"]], "q2": ["c1", ["D1:2", "D1:3"]]}
    turns = ["D1:3", *[f"D9:{i}" for i in range(4)], "D1:2"]  # D1:3 first, D1:2 sixth
    answers = {"q1": {"turns": ["D9:9"] * 10}, "q2": {"turns": turns}}
    scores = recall_at(answers, questions, {"q1": "single-hop", "q2": "multi-hop"})
    assert scores["all"] == {"n": 2, "recall@5": 0.25, "recall@10": 0.5}
    assert scores["multi-hop"] == {"n": 1, "recall@5": 0.5, "recall@10": 1.0}
    assert list(scores) == ["all", "multi-hop", "single-hop"]
    beam = recall_at(answers, questions, {"q1": "temporal_reasoning", "q2": "event_ordering"})
    assert list(beam) == ["all", "event_ordering", "temporal_reasoning"]  # another dataset's, sorted


def test_mem0_is_scored_on_its_first_distinct_turns() -> None:
    from engramdb_bench.versus.mem0_arm import distinct_turns

    found = [{"metadata": {"turn": t}} for t in ["7", "7", "3", "9", "3", "4"]]  # a turn's two messages
    assert distinct_turns(found, 3) == ["7", "3", "9"]
    assert distinct_turns(found, 10) == ["7", "3", "9", "4"]  # fewer distinct turns than asked: all of them
    assert distinct_turns([{"metadata": {"turn": t}} for t in "abc"], 2) == ["a", "b"]  # control: no repeats


def test_the_newer_statement_counts_only_when_it_ranks_above_the_older() -> None:
    answers = {"q1": {"turns": ["7", "3", "9"]}, "q2": {"turns": ["3", "7"]}, "q3": {"turns": ["1"]}}
    orders = {"q1": (["3"], ["7"]), "q2": (["3"], ["7"]), "q3": (["3"], ["7"])}
    assert update_above(answers, orders) == {"n": 3, "share": round(1 / 3, 4)}  # above, below, neither found
    assert update_above(answers, {}) is None  # LoCoMo's questions have no such order


def test_the_rest_of_a_recall_is_the_client_time_past_the_servers_embedding_and_search() -> None:
    answers = {
        "q1": {"ms": 10.0, "server": {"embedMs": 5.0, "searchMs": 3.0}},
        "q2": {"ms": 14.0, "server": {"embedMs": 6.0, "searchMs": 4.0}},
        "q3": {"ms": 12.0, "server": {"embedMs": 7.0, "searchMs": 2.0}},
    }
    assert server_parts(answers) == {"embed": 6.0, "search": 3.0, "rest": 3.0}  # medians: 6, 3 and of 2, 4, 3
    assert server_parts({**answers, "q4": {"ms": 9.0}}) is None  # one answer without timings: no partial parts


def test_without_mem0_the_command_says_which_extra_to_install(tmp_path: Path) -> None:
    with pytest.raises(Mem0UnavailableError, match=r"pip install -e '\.\[versus\]'"):
        check_mem0(str(tmp_path / "no-such-python"))


def test_the_timed_engramdb_server_embeds_every_question(tmp_path: Path) -> None:
    """Its passes ask the same questions again: a kept query vector would spare it the embedding."""
    from engramdb_bench.versus.engram_arm import EngramServer

    server = EngramServer(tmp_path, "hashing")
    try:
        deadline = time.monotonic() + 30
        environ = [b""]
        while environ == [b""] and time.monotonic() < deadline:  # empty until the child has exec'd
            environ = Path(f"/proc/{server.process.pid}/environ").read_bytes().split(b"\0")
            time.sleep(0.05)
    finally:
        server.stop()
    assert b"ENGRAM_QUERY_CACHE_SIZE=0" in environ
    assert f"ENGRAM_HOME={server.home}".encode() in environ  # control: this is the server's own environment
