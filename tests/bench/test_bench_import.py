"""``engram bench import`` runs both arms over the same turns against a real server, and the
import again writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner


def test_bench_import_writes_the_same_turns_by_both_arms_and_nothing_again(tmp_path: Path) -> None:
    from engramdb.cli.main import app

    out = tmp_path / "import.json"
    args = ["bench", "import", "--turns", "120", "--rounds", "1", "--blocks", "2", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, (result.output, result.exception)
    found = json.loads(out.read_text())
    assert (found["backend"], found["turns"], found["blocks"], len(found["rounds"])) == ("sqlite", 120, 2, 1)
    assert found["importAgain"]["created"] == 0 and found["importAgain"]["existing"] == 120  # positive beside it
    for arm in ("batch", "import"):
        assert len(found["cpuS"][arm]) == 2 and found["cpuS"][arm][1] > 0  # the server's CPU was counted
