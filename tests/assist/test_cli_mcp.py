"""The model-assisted commands (``engram assist ...``, ``engram facts links``) and MCP tools
(extract_facts, reflect), run as people and hosts run them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from tests.assist.brain import Brain
from tests.assist.helpers import fact
from tests.conftest import LiveServer
from tests.mcp.helpers import error_code, ok
from tests.mcp.test_http import run
from tests.sdk.chat_server import ScriptedChat

ENGRAM = [sys.executable, "-m", "engramdb.cli"]


@pytest.fixture
def backend() -> str:
    return "sqlite"


def _engram(home: Path, *args: str, model: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDER": "hashing", **env}
    if model:
        environment |= {"ENGRAM_LLM__BASE_URL": model, "ENGRAM_LLM__MODEL": "scripted"}
    return subprocess.run([*ENGRAM, *args], env=environment, capture_output=True, text=True, timeout=120)


def test_the_commands_on_the_data_folder(tmp_path: Path, chat: ScriptedChat, brain: Brain) -> None:
    brain.facts = [fact("user", "pet", "The user has a cat.")]
    brain.verdicts = [{"about": "cat", "of": "dog", "verdict": "coexists", "confidence": 0.8}]
    home = tmp_path / "data"
    assert _engram(home, "remember", "The user has a dog", "--subject", "user", "--kind", "dog").returncode == 0
    done = _engram(home, "assist", "extract", "--text", "The user has a cat.", "--json", model=chat.url)
    assert done.returncode == 0, done.stderr
    [cat] = json.loads(done.stdout)["items"]
    assert (cat["action"], cat["text"]) == ("parked", "The user has a cat.")
    usage = _engram(home, "assist", "usage", "--json", model=chat.url)
    assert [p["purpose"] for p in json.loads(usage.stdout)["byPurpose"]] == ["extract", "judge"]
    links = _engram(home, "facts", "links", cat["factId"], "--json")  # (prefixes name current facts only)
    assert links.returncode == 0, links.stderr
    assert [(k["linkType"], k["state"]) for k in json.loads(links.stdout)["links"]] == [("COEXISTS", "proposed")]
    queued = _engram(home, "assist", "queue", "--text", "The user has a cat.", "--json", model=chat.url)
    job = json.loads(queued.stdout)
    assert job["state"] == "queued"
    listed = _engram(home, "assist", "jobs")  # a table for people; no model needed to read the queue
    assert listed.returncode == 0 and job["jobId"] in listed.stdout
    # Without a model: the command says how to set one, and exits 1.
    refused = _engram(home, "assist", "extract", "--text", "The user has a cat.")
    assert refused.returncode == 1 and "ENGRAM_LLM__BASE_URL" in refused.stderr


def test_the_commands_against_a_server(live: LiveServer, brain: Brain, tmp_path: Path) -> None:
    brain.facts = [fact("user", "pet", "The user has a cat.")]
    key = live.key()
    remote = {"ENGRAM_URL": live.url, "ENGRAM_KEY": key}
    added = _engram(
        tmp_path,
        "assist",
        "add",
        "--body",
        json.dumps({"messages": [{"role": "user", "content": "The user has a cat."}]}),
        "--json",
        **remote,
    )
    assert added.returncode == 0, added.stderr
    assert [i["text"] for i in json.loads(added.stdout)["parked"]] == ["The user has a cat."]
    episode = json.loads(added.stdout)["episodes"][0]
    extracted = _engram(tmp_path, "assist", "extract", "--episode-ids", episode, "--json", **remote)
    assert extracted.returncode == 0, extracted.stderr
    assert [i["action"] for i in json.loads(extracted.stdout)["items"]] == ["duplicate"]


def _tools(live: LiveServer, key: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    results: list[Any] = []

    async def body(client: Any) -> None:
        for name, args in calls:
            results.append(await client.call_tool(name, args))

    run(live, key, body)
    return results


def test_the_mcp_tools_extract_and_reflect_as_derived(live: LiveServer, brain: Brain) -> None:
    brain.facts = [fact("user", "pet", "The user has a cat.")]
    brain.reflections = [{"text": "The user seems to love animals.", "evidence": ["dog", "cat"]}]
    key = live.key()
    with live.client(key) as http:
        http.post("/v1/facts", json={**_fact("The user has a dog.", "dog"), "sourceEventId": "t1"})
        http.post("/v1/facts", json={**_fact("The user feeds a cat.", "cat"), "sourceEventId": "t2"})
    extracted, reflected, injected = _tools(
        live,
        key,
        [
            ("extract_facts", {"text": "The user has a cat."}),
            ("reflect", {"subject": "user", "max_reflections": 1}),
            ("extract_facts", {"text": "x", "agentId": "other"}),
        ],
    )
    said = ok(extracted)
    assert "parked" in said and '"The user has a cat."' in said and "reviewer" in said
    assert extracted.structured_content["items"][0]["action"] == "parked"
    assert "The user seems to love animals." in ok(reflected)
    assert error_code(injected) == "invalid_input"  # no tool takes a scope argument
    with live.client(key) as http:
        pending = http.get(f"/v1/facts/{extracted.structured_content['items'][0]['factId']}").json()
        assert (pending["origin"], pending["status"]) == ("derived", "pending_review")


def test_the_mcp_tools_that_need_a_model_are_not_offered_without_one(store: Any, tmp_path: Path) -> None:
    from engramdb.config import Settings
    from engramdb.core.embedding import HashingEmbedder

    live = LiveServer(Settings(home=tmp_path / "home", embedder="hashing"), store, HashingEmbedder())
    live.start()
    try:
        # The tools that need a model are not offered: a call by name is an unknown tool's protocol
        # error (tests/mcp/test_defaults.py), not a failure the server logs.
        async def body(client: Any) -> None:
            with pytest.raises(MCPError, match="Unknown tool: extract_facts"):
                await client.call_tool("extract_facts", {"text": "The user has a cat."})

        run(live, live.key(), body)
    finally:
        live.stop()


def _fact(text: str, kind: str) -> dict[str, Any]:
    from tests.factories import fact_body

    return fact_body(text, kind=kind)


def test_serve_runs_the_queue_in_a_worker_process(tmp_path: Path, chat: ScriptedChat, brain: Brain) -> None:
    """``engram serve`` with a model starts ``engram assist work`` beside it, and stops it with itself."""
    import signal
    import socket
    import time

    import httpx

    brain.facts = [fact("user", "pet", "The user has a cat.")]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        **os.environ,
        "ENGRAM_HOME": str(tmp_path / "home"),
        "ENGRAM_EMBEDDER": "hashing",
        "ENGRAM_LLM__BASE_URL": chat.url,
        "ENGRAM_LLM__MODEL": "scripted",
        "ENGRAM_LLM__WORKERS": "1",
        "ENGRAM_LLM__WORKER_IDLE": "true",
    }
    with subprocess.Popen(
        [*ENGRAM, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as serve:
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            key = _engram(
                tmp_path / "home",
                "keys",
                "create",
                "--role",
                "agent",
                "--agent-id",
                "a",
                "--profile-id",
                "p",
                "--participant",
                "c" * 64,
                "--privacy",
                "private",
                "--sandbox-eligible",
                "false",
                "--json",
                "--tenant",
                "default",
            )
            token = json.loads(key.stdout)["key"]
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
                job = http.post("/v1/extract/queue", json={"text": "The user has a cat."}).json()
                while time.monotonic() < deadline + 60:
                    state = http.get(f"/v1/assist/jobs/{job['jobId']}").json()
                    if state["state"] in ("done", "failed"):
                        break
                    time.sleep(0.1)
            assert state["state"] == "done" and state["result"]["items"][0]["action"] == "parked"
            # Only this server's children: another program's workers on the machine are not ours to see.
            workers = _children(serve.pid, "engramdb.cli assist work")
            assert workers, "no worker process"
            # Asked for (llm.workerIdle): background work at the idle priority; the server at the normal one.
            assert {os.sched_getscheduler(pid) for pid in workers} == {os.SCHED_IDLE}
            assert os.sched_getscheduler(serve.pid) == os.SCHED_OTHER
            assert all(_running(pid) for pid in workers)  # the check below does see a live worker
        finally:
            serve.send_signal(signal.SIGINT)
            serve.wait(timeout=60)
    assert [pid for pid in workers if _running(pid)] == []  # the worker stopped with the server


def _running(pid: int) -> bool:
    """True while ``pid`` is a process that has not exited (a zombie has exited)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


def test_the_worker_command_needs_a_model(tmp_path: Path) -> None:
    done = _engram(tmp_path / "home", "assist", "work")
    assert done.returncode == 1 and "ENGRAM_LLM__BASE_URL" in done.stderr


def _children(pid: int, command: str) -> list[int]:
    """The child processes of ``pid`` (the server this test started) whose command line holds ``command``."""
    children = [
        int(child) for task in Path(f"/proc/{pid}/task").iterdir() for child in (task / "children").read_text().split()
    ]
    return [child for child in children if command in _cmdline(child)]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:  # gone meanwhile
        return ""
