"""`engram bench recall` end to end on a tiny size (hashing embedder): every stage is timed."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner


def test_bench_recall_times_every_stage(tmp_path: Path) -> None:
    from engramdb.cli.main import app

    out = tmp_path / "latency.json"
    done = CliRunner().invoke(app, ["bench", "recall", "--sizes", "300", "--queries", "5", "--embedder", "hashing",
                                    "--ingest-sample", "40", "--out", str(out)])  # fmt: skip
    assert done.exit_code == 0, done.output
    [row] = json.loads(out.read_text())["results"]
    assert row["size"] == 300 and row["searchMs"]["p50"] > 0
    for stage in ("dense", "lexical", "neighbours", "records"):  # each went through the timed store
        assert row["breakdownMs"][stage]["p50"] > 0, stage
    assert row["candidates"]["lexicalMean"] > 0 and row["candidates"]["hitsMean"] > 0
