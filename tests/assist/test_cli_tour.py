"""Every model-assisted command, run on the data folder and against a running server (the same
tour as tests/surfaces/test_cli_operations.py, with the scripted model configured)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engramdb.models.operations.assist import ASSIST_OPERATIONS
from tests.assist.brain import Brain
from tests.assist.helpers import fact
from tests.conftest import LiveServer
from tests.sdk.chat_server import ScriptedChat
from tests.surfaces.test_cli_operations import Run, _runner, _scope, _scope_args


def _tour(run: Run, tag: str) -> None:
    s = _scope_args(_scope(tag))
    run("remember", f"The user likes hiking ({tag})", "--subject", "user", "--kind", "likes", *s)
    run(
        "remember",
        f"The user likes hiking! ({tag})",
        "--subject",
        "user",
        "--kind",
        "likes",
        "--source-event-id",
        "t2",
        *s,
    )
    extracted = run("assist", "extract", "--text", f"The user has a cat ({tag})", *s)
    [cat] = extracted["items"]
    assert cat["action"] == "parked"
    assert run("facts", "links", cat["factId"], *s) == {"links": []}
    job = run("assist", "queue", "--text", f"The user has a dog ({tag})", *s)
    assert job["state"] in ("queued", "running", "done")
    assert job["jobId"] in {j["jobId"] for j in run("assist", "jobs", *s)["jobs"]}
    assert run("assist", "job", job["jobId"])["jobId"] == job["jobId"]
    reflected = run("assist", "reflect", "--subject", "user", *s)
    assert len(reflected["evidenceFactIds"]) == 2
    merged = run("assist", "consolidate", "--kind", "likes", "--similarity", "0.9", *s)
    [group] = merged["groups"]
    assert group["action"] == "proposed"  # derived: the merge waits for review
    approved = run("review", "approve", group["merged"]["factId"])
    assert approved["memory"]["status"] == "active"
    undone = run("assist", "unconsolidate", group["merged"]["factId"], "--reason", "different", *s)
    assert undone["merged"]["status"] == "archived" and len(undone["restored"]) == 2
    added = run(
        "assist",
        "add",
        "--body",
        json.dumps({"messages": [{"role": "user", "content": f"Hi ({tag})"}]}),
        "--no-infer",
        *s,
    )
    assert len(added["episodes"]) == 1
    assert run("assist", "usage")["total"]["calls"] >= 3


@pytest.mark.parametrize("mode", ["local", "remote"])
def test_every_model_command_runs_on_the_data_folder_and_against_a_server(
    live: LiveServer, chat: ScriptedChat, brain: Brain, tmp_path: Path, mode: str
) -> None:
    brain.facts = [
        ("The user has a cat", fact("user", "pet", "The user has a cat.")[1]),
        ("The user has a dog", fact("user", "pet", "The user has a dog.")[1]),
    ]
    brain.reflections = [{"text": "The user loves hiking.", "evidence": ["hiking"]}]
    brain.merge = {"merge": True, "text": "The user likes hiking."}
    ran: set[str] = set()
    env = {
        **live.cli_env(),
        "ENGRAM_EMBEDDER": "hashing",
        "ENGRAM_LLM__BASE_URL": chat.url,
        "ENGRAM_LLM__MODEL": "scripted",
    }
    live.store.tenant("t1", create=True)
    extra = ["--tenant", "t1"] if mode == "local" else ["--url", live.url, "--key", live.key(role="admin")]
    if mode == "remote":
        for name in ("ENGRAM_HOME", "ENGRAM_DATABASE_URL", "ENGRAM_LLM__BASE_URL"):  # the server's model, not ours
            env.pop(name, None)
    _tour(_runner(env, extra, ran), mode)
    assert {op.name for op in ASSIST_OPERATIONS} <= ran, {op.name for op in ASSIST_OPERATIONS} - ran
