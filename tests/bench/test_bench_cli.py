"""`engram bench recall` and `engram bench scale` end to end on tiny sizes: every stage is timed,
every scoped query exact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner


def test_bench_recall_times_every_stage(tmp_path: Path) -> None:
    from engramdb.cli.main import app

    out = tmp_path / "latency.json"
    done = CliRunner().invoke(
        app,
        [
            "bench",
            "recall",
            "--sizes",
            "300",
            "--queries",
            "5",
            "--embedder",
            "hashing",
            "--ingest-sample",
            "40",
            "--out",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    [row] = json.loads(out.read_text())["results"]
    assert row["size"] == 300 and row["searchMs"]["p50"] > 0
    for stage in ("dense", "lexical", "neighbours", "records"):  # each went through the timed store
        assert row["breakdownMs"][stage]["p50"] > 0, stage
    assert row["candidates"]["lexicalMean"] > 0 and row["candidates"]["hitsMean"] > 0


@pytest.mark.postgres
def test_bench_scale_is_exact_on_both_backends(tmp_path: Path, pg_url: str) -> None:
    from engramdb.cli.main import app

    out = tmp_path / "scale.json"
    done = CliRunner().invoke(
        app,
        ["bench", "scale", "--totals", "400", "--scopes", "8", "--queries", "6", "--pg-url", pg_url, "--out", str(out)],
    )
    assert done.exit_code == 0, done.output
    rows = json.loads(out.read_text())["results"]
    assert [r["backend"] for r in rows] == ["sqlite", "postgres"]
    for row in rows:
        assert row["perScope"] == 50 and row["recallAt10VsExact"] == 1.0, row
        assert row["recallP50Ms"] > 0 and row["repeatP50Ms"] > 0, row  # both passes timed
    assert json.loads(out.read_text())["postgres"] == {"throwaway": False, "sharedBuffersMb": None}


def test_bench_slots_writes_one_slot_and_reads_its_whole_history_on_both_backends(tmp_path: Path, pg_url: str) -> None:
    from engramdb.cli.main import app

    out = tmp_path / "slots.json"
    args = ["bench", "slots", "--versions", "40", "--window", "10", "--reads", "1", "--pg-url", pg_url]
    done = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert done.exit_code == 0, done.output
    rows = json.loads(out.read_text())["results"]
    assert [r["backend"] for r in rows] == ["sqlite", "postgres"]
    for row in rows:
        assert row["versions"] == 40 and len(row["windowMedianMs"]) == 4, row  # every version in the history
        assert row["lastOverFirst"] == round(row["lastWriteMs"] / row["firstWriteMs"], 3), row
    refused = CliRunner().invoke(app, ["bench", "slots", "--versions", "20", "--window", "15"])
    assert refused.exit_code != 0 and "--versions" in str(refused.exception)  # fewer than two windows: refused


@pytest.mark.postgres
def test_bench_scale_starts_its_own_postgres_with_a_production_buffer_cache(tmp_path: Path) -> None:
    from engramdb.cli.main import app
    from engramdb_bench.scale import shared_buffers_mb

    out = tmp_path / "scale.json"
    done = CliRunner().invoke(
        app,
        [
            "bench",
            "scale",
            "--backends",
            "postgres",
            "--totals",
            "60",
            "--scopes",
            "3",
            "--queries",
            "3",
            "--out",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    result = json.loads(out.read_text())
    assert result["postgres"] == {"throwaway": True, "sharedBuffersMb": shared_buffers_mb()}
    assert shared_buffers_mb() >= 128 and result["results"][0]["recallAt10VsExact"] == 1.0


def test_bench_load_offers_a_rate_and_measures_the_servers_memory(tmp_path: Path) -> None:
    """A real server on loopback: the long episodes are embedded first (their RSS recorded), then the
    scope is filled and the rate offered; every request is answered."""
    from engramdb.cli.main import app

    out = tmp_path / "load.json"
    done = CliRunner().invoke(
        app,
        [
            "bench",
            "load",
            "--rates",
            "20",
            "--seconds",
            "2",
            "--memories",
            "150",
            "--embedder",
            "hashing",
            "--long-episodes",
            "10",
            "--out",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    result = json.loads(out.read_text())
    [row] = result["results"]
    assert row["sent"] == 40 and row["served"] + row["refused"] == 40 and row["errors"] == 0, row
    assert row["served"] > 0 and row["p50Ms"] > 0 and row["rssMaxMb"] > 0
    assert result["warmSeconds"] > 0  # the untimed recalls that built the scope's copy ran first
    long = result["longEpisodes"]
    assert long["rssAfterMb"] > 0 and long["rssMaxMb"] >= long["rssAfterMb"] and long["seconds"] > 0
    # The reference arm: the bare pipeline offered the same rate, recalls only, every one answered.
    [floor] = result["reference"]
    assert floor["sent"] == 40 and floor["served"] == 40 and floor["errors"] == 0, floor
    assert result["referenceCapacityPerS"] in (0.0, 20.0) and result["capacityPerS"] in (0.0, 20.0)


def test_capacity_is_the_highest_rate_served_whole_under_the_p99_limit() -> None:
    from engramdb_bench.load_reference import capacity

    def row(rate: float, p99: float, achieved: float | None = None, refused: int = 0) -> dict[str, float]:
        served = rate if achieved is None else achieved
        return {"offeredPerS": rate, "p99Ms": p99, "achievedPerS": served, "refused": refused, "errors": 0}

    assert capacity([row(50, 20), row(100, 60), row(200, 140)]) == 100  # 200/s missed the p99 limit
    assert capacity([row(50, 20), row(100, 60, achieved=80)]) == 50  # 100/s was not served whole
    assert capacity([row(50, 20, refused=3)]) == 0  # refusals are not capacity
    assert capacity([row(50, 99.9), row(80, 10)]) == 80  # control: the highest that held
