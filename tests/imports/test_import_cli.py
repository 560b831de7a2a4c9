"""``engram import SOURCE FILE`` against a server and on the data folder, its dry run, and
``engram import --in`` (the tenant import) beside it; the batch write's dryRun and extract over REST."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from tests.cli import invoke
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields

SAMPLES = Path(__file__).parent / "samples"


@pytest.fixture
def backend() -> str:
    """The command line and REST speak to one backend here (the imports themselves run on both)."""
    return "sqlite"


def engram(*args: str) -> Result:
    """The real ``engram`` command line, run in this process (a process each would start Python again)."""
    return invoke(list(args))


def report(done: Result) -> dict[str, Any]:
    assert done.exit_code == 0, (done.stderr, done.exception)
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_engram_import_against_a_server_then_again_then_a_dry_run(server: LiveServer) -> None:
    key = server.key(role="host", agentId="importer", profileId="default")
    remote = ["--url", server.url, "--key", key, "--user-id", "alice", "--privacy", "private"]
    common = [*remote, "--sandbox-eligible", "false", "--json"]
    dry = report(engram("import", "jsonl", str(SAMPLES / "chat.jsonl"), "--dry-run", *common))
    assert (dry["dryRun"], dry["created"], dry["existing"]) == (True, 5, 0)
    done = report(engram("import", "jsonl", str(SAMPLES / "chat.jsonl"), *common))
    assert (done["created"], done["skipped"], done["redacted"]) == (
        5,
        {"a system message": 1, "a tool message": 1},
        {"secret": 1},
    )
    again = report(engram("import", "jsonl", str(SAMPLES / "chat.jsonl"), *common))
    assert (again["created"], again["existing"]) == (0, 5)
    people = engram("import", "jsonl", str(SAMPLES / "chat.jsonl"), *common[:-1])
    assert people.exit_code == 0 and "wrote 0, 5 stored already" in people.stdout


def test_engram_import_on_the_data_folder_and_the_tenant_import_beside_it(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    done = report(engram("import", "mem0", str(SAMPLES / "mem0-get-all.json"), "--home", home, "--json"))
    assert (done["created"], done["existing"]) == (6, 0)
    listed = json.loads(engram("episodes", "list", "--home", home, "--json", "--limit", "100").stdout)
    assert len(listed["episodes"]) == 6  # in this machine's user's scope, as other data-folder commands
    exported = tmp_path / "export.jsonl"
    assert engram("export", "--home", home, "--out", str(exported)).exit_code == 0
    loaded = engram("import", "--in", str(exported), "--tenant", "copy", "--home", home)
    assert loaded.exit_code == 0 and "imported into tenant 'copy'" in loaded.stdout
    both = engram("import", "--in", str(exported), "mem0", str(SAMPLES / "mem0-get-all.json"), "--home", home)
    assert both.exit_code == 1 and "one or the other" in str(both.exception)  # `engram` prints it, exit 1
    bare = engram("import")
    assert bare.exit_code == 2 and "claude-code" in bare.stdout and "--in" in bare.stdout


def test_the_batch_writes_answer_a_dry_run_and_refuse_extraction_without_a_model(server: LiveServer) -> None:
    bodies = [episode_body(f"Dry turn {i}.", turn=i, scope=scope_fields()) for i in range(3)]
    with server.client(server.key()) as agent:
        assert agent.post("/v1/episodes/batch", json={"episodes": bodies[:1]}).status_code == 200
        dry = agent.post("/v1/episodes/batch", params={"dryRun": "true"}, json={"episodes": [*bodies, bodies[2]]})
        statuses = [(r["status"], r["outcome"], r["dryRun"]) for r in dry.json()["results"]]
        assert statuses == [
            (200, "exists", True),
            (201, "created", True),
            (201, "created", True),
            (200, "exists", True),
        ]
        refused = agent.post("/v1/episodes/batch", params={"extract": "true"}, json={"episodes": bodies})
        assert refused.status_code == 501 and refused.json()["code"] == "model_not_configured"
        listed = agent.get("/v1/episodes", params={"limit": 100}).json()["episodes"]
        assert len(listed) == 1  # neither the dry run nor the refused batch wrote anything
