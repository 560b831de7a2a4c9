"""The `engram` command line on a real data folder: ``engram serve`` as its own process, as a user
starts it; the other commands through the same entry point in the test's process (tests/cli.py)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from engramdb.core.embedder_choice import cpu_has_int8_kernels
from tests.cli import engram
from tests.factories import episode_body
from tests.keepalive import answers_after_idle

ENGRAM = [sys.executable, "-m", "engramdb.cli"]
SCOPE = {
    "agentId": "a",
    "profileId": "p",
    "privacyScope": "private",
    "participantScopeHash": "c" * 64,
    "sandboxEligible": False,
}


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return engram(*args, env={**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDER": "hashing"})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _serving(env: dict[str, str], port: int) -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen(
        [*ENGRAM, "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as proc:
        try:
            yield proc
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)


def _read_until_started(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        # Not "Application startup complete": uvicorn says it before it binds the port (a race CI met).
        if not line or "Uvicorn running on" in line:
            break
    return "".join(lines)


def test_serve_creates_default_tenant_prints_admin_key_and_serves(tmp_path: Path) -> None:
    """The Quickstart path: default embedder, no configuration, first admin key printed. A new
    folder's default model is `minilm-fast` on an x86 CPU with AVX2 or VNNI (this machine kind), else `minilm`."""
    port = _free_port()
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("ENGRAM_EMBEDDER", None)
    model = "all-MiniLM-L6-v2-int8-dynamic" if cpu_has_int8_kernels() else "all-MiniLM-L6-v2-int8"
    with _serving(env, port) as proc:
        output = _read_until_started(proc)
        token = re.search(r"egm\.default\.\w+\.[\w-]+", output)
        assert token, output
        assert f"http://127.0.0.1:{port}" in output
        headers = {"Authorization": f"Bearer {token.group()}"}
        scope = SCOPE
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as http:
            body = episode_body("The staging database is in Frankfurt", scope=scope)
            assert http.post("/v1/episodes", json=body).status_code == 201
            found = http.post("/v1/recall", json={"query": "where is staging database", "scope": scope})
            assert found.json()["memories"][0]["text"].startswith("The staging database is in Frankfurt")
            assert http.get("/healthz").json()["embedder"] == model
        # An idle connection outlives the client's own idle expiry (engramdb/api/keep_alive.py).
        assert answers_after_idle(port) == (b"HTTP/1.1 200 OK", b"HTTP/1.1 200 OK")
    # Second start: the tenant exists, so no new admin key is printed.
    with _serving(env, port) as again:
        output = _read_until_started(again)
        assert "EngramDB" in output and "egm." not in output


def test_a_folder_embedded_by_minilm_keeps_it_when_no_embedder_is_named(tmp_path: Path) -> None:
    """The upgrade path: a folder whose memories the packaged model embedded (the default before
    `auto`) is served on that model again with no ENGRAM_EMBEDDER, its vectors found by meaning,
    none of them stale; nothing switches models without `engram reembed`."""
    port = _free_port()
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    scope = SCOPE
    question = {"query": "which German city hosts the pre-production DB?", "scope": scope}  # no shared word
    with _serving({**env, "ENGRAM_EMBEDDER": "minilm"}, port) as proc:
        token = re.search(r"egm\.default\.\w+\.[\w-]+", _read_until_started(proc))
        assert token
        headers = {"Authorization": f"Bearer {token.group()}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as http:
            for text in ("The staging database is in Frankfurt", "Lunch on Fridays is pizza"):
                assert http.post("/v1/episodes", json=episode_body(text, scope=scope)).status_code == 201
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                found = http.post("/v1/recall", json=question).json()["memories"]
                if len(found) == 2 and all(m["embeddingState"] == "ready" for m in found):
                    break
                time.sleep(0.1)
            assert {m["embeddingState"] for m in found} == {"ready"}, "not embedded within 30 s"
    env.pop("ENGRAM_EMBEDDER", None)
    with _serving(env, port) as proc:
        _read_until_started(proc)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as http:
            assert http.get("/healthz").json()["embedder"] == "all-MiniLM-L6-v2-int8"
            found = http.post("/v1/recall", json=question).json()["memories"]
            assert found[0]["text"].startswith("The staging database is in Frankfurt")
            assert {m["embeddingState"] for m in found} == {"ready"}


def test_serve_on_minilm_fast_embeds_with_it_and_its_vectors_are_its_own(tmp_path: Path) -> None:
    """`ENGRAM_EMBEDDER=minilm-fast` through the real server: memories are embedded with it and
    found by meaning; a server on the default model then treats those vectors as stale."""
    port = _free_port()
    env = {
        **os.environ,
        "ENGRAM_HOME": str(tmp_path / "data"),
        "ENGRAM_EMBEDDER": "minilm-fast",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    scope = SCOPE
    # No word of the question is in the memory it must find: only the vectors can find it.
    question = {"query": "which German city hosts the pre-production DB?", "scope": scope}
    with _serving(env, port) as proc:
        token = re.search(r"egm\.default\.\w+\.[\w-]+", _read_until_started(proc))
        assert token
        headers = {"Authorization": f"Bearer {token.group()}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as http:
            assert http.get("/healthz").json()["embedder"] == "all-MiniLM-L6-v2-int8-dynamic"
            texts = (
                "The staging database is in Frankfurt",
                "Lunch on Fridays is pizza",
                "Ana plays the cello",
                "The release train leaves every second Tuesday",
                "Our office plants need water weekly",
            )
            for text in texts:
                assert http.post("/v1/episodes", json=episode_body(text, scope=scope)).status_code == 201
            deadline = time.monotonic() + 30
            while True:
                found = http.post("/v1/recall", json=question).json()["memories"]
                if (found and all(m["embeddingState"] == "ready" for m in found)) or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert found, "nothing was found by meaning within 30 s"
            assert found[0]["text"].startswith("The staging database is in Frankfurt")
            assert found[0]["embeddingState"] == "ready"
    env["ENGRAM_EMBEDDER"] = "minilm"
    with _serving(env, port) as proc:
        _read_until_started(proc)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as http:
            assert http.get("/healthz").json()["embedder"] == "all-MiniLM-L6-v2-int8"
            # Another model's vectors are left out of the vector arm: found by their words only.
            by_words = http.post("/v1/recall", json={**question, "query": "staging database"}).json()["memories"]
            assert by_words[0]["text"].startswith("The staging database is in Frankfurt")
            assert {m["embeddingState"] for m in by_words} == {"stale"}


def test_keys_create_list_revoke(tmp_path: Path) -> None:
    created = _run(
        tmp_path,
        "keys",
        "create",
        "--tenant",
        "acme",
        "--create-tenant",
        "--role",
        "agent",
        "--agent-id",
        "a",
        "--profile-id",
        "p",
        "--participant",
        "d" * 64,
        "--privacy",
        "private",
        "--sandbox-eligible",
        "false",
        "--json",
    )
    assert created.returncode == 0, created.stderr
    payload = json.loads(created.stdout)
    assert payload["key"].startswith("egm.acme.") and payload["grant"]["sandboxEligible"] is False
    listed = _run(tmp_path, "keys", "list", "--tenant", "acme")
    assert payload["keyId"] in listed.stdout and "agent" in listed.stdout
    assert _run(tmp_path, "keys", "revoke", payload["keyId"], "--tenant", "acme").returncode == 0
    again = _run(tmp_path, "keys", "revoke", payload["keyId"], "--tenant", "acme")
    assert again.returncode == 1 and "no active key" in again.stderr
    plain = _run(tmp_path, "keys", "create", "--tenant", "acme", "--role", "reviewer")
    assert re.fullmatch(r"egm\.acme\.\w+\.[\w-]+\n", plain.stdout)


def test_keys_create_makes_a_tenant_only_when_asked(tmp_path: Path) -> None:
    assert _run(tmp_path, "keys", "create", "--tenant", "acme", "--create-tenant", "--role", "admin").returncode == 0
    typo = _run(tmp_path, "keys", "create", "--tenant", "acmee", "--role", "reviewer")
    assert typo.returncode == 1 and typo.stdout == ""
    assert "error: no tenant named 'acmee'; pass --create-tenant to create it" in typo.stderr, typo.stderr
    assert _run(tmp_path, "keys", "list", "--tenant", "acmee").returncode == 1  # nothing was created
    # Positive controls: the existing tenant takes keys without the flag; the flag on an
    # existing tenant changes nothing.
    again = _run(tmp_path, "keys", "create", "--tenant", "acme", "--role", "reviewer")
    assert again.returncode == 0 and again.stdout.startswith("egm.acme."), again.stderr
    assert (
        _run(
            tmp_path,
            "keys",
            "create",
            "--tenant",
            "acme",
            "--create-tenant",
            "--role",
            "host",
            "--agent-id",
            "a",
            "--profile-id",
            "p",
        ).returncode
        == 0
    )
    listed = _run(tmp_path, "keys", "list", "--tenant", "acme").stdout
    assert all(role in listed for role in ("admin", "reviewer", "host")), listed


def test_keys_create_refuses_an_incomplete_grant(tmp_path: Path) -> None:
    result = _run(tmp_path, "keys", "create", "--role", "agent", "--agent-id", "a")
    assert result.returncode == 1
    assert "agent keys must be bound to profileId" in result.stderr


def test_error_messages_are_printed_whole_brackets_included(tmp_path: Path) -> None:
    bad = _run(tmp_path, "remember", "z", "--subject", "user", "--participant", "XYZ")
    assert bad.returncode == 1
    assert "error: participantScopeHash: String should match pattern '^[a-f0-9]{64}$'" in bad.stderr, bad.stderr
    good = _run(tmp_path, "remember", "z", "--subject", "user", "--participant", "a" * 64)
    assert good.returncode == 0, good.stderr  # positive control: the same command, a valid hash
    unknown = _run(tmp_path, "keys", "revoke", "[bold]k1[/bold]")
    assert unknown.returncode == 1 and "error: no active key [bold]k1[/bold] in tenant default" in unknown.stderr


def test_remember_then_recall_with_explain(tmp_path: Path) -> None:
    assert (
        _run(tmp_path, "remember", "The user prefers green tea", "--subject", "user", "--kind", "preference").returncode
        == 0
    )
    assert _run(tmp_path, "remember", "The repo uses Rust", "--subject", "repo").returncode == 0
    result = _run(tmp_path, "recall", "green tea", "--explain")
    assert result.returncode == 0, result.stderr
    assert "The user prefers green tea" in result.stdout
    assert "dense" in result.stdout and "lexical" in result.stdout
    assert "weight 0.50" in result.stdout  # both words are in a memory: the lexical arm keeps its weight
    dated = _run(tmp_path, "recall", "green tea zebra in March 2026", "--explain")
    assert "date +" in dated.stdout  # the date feature, named
    assert re.search(r"lexical #1 [\d.]+ \(\+[\d.]+, weight 0\.[0-4]", dated.stdout)  # "zebra" is in no memory
    other_scope = _run(tmp_path, "recall", "green tea", "--participant", "e" * 64)
    assert "green tea" not in other_scope.stdout
    block = _run(tmp_path, "recall", "green tea", "--context")
    assert block.stdout.startswith("Historical memory follows.")


def test_import_refuses_a_broken_export_and_keeps_nothing(tmp_path: Path) -> None:
    assert _run(tmp_path, "remember", "Keep me", "--subject", "user").returncode == 0
    good = tmp_path / "good.jsonl"
    assert _run(tmp_path, "export", "--out", str(good)).returncode == 0
    lines = good.read_text().splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([*lines[:-1], '{"table": "memories"', lines[-1]]) + "\n")
    other = tmp_path / "other"
    refused = _run(other, "import", "--in", str(broken))
    assert refused.returncode == 1 and f"line {len(lines)} of the export" in refused.stderr
    notes = tmp_path / ("a-long-folder-name-" * 4) / "notes.txt"  # the message passes 80 columns: not wrapped
    notes.parent.mkdir()
    notes.write_text("just some notes\n")
    not_export = _run(other, "import", "--in", str(notes))
    assert not_export.returncode == 1 and "is not an engramdb export" in not_export.stderr
    # Nothing was half-written: the same target then takes the good export whole.
    accepted = _run(other, "import", "--in", str(good))
    assert accepted.returncode == 0, accepted.stderr
    assert "Keep me" in _run(other, "recall", "keep").stdout
