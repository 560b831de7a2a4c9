"""EngramDB on the versus corpus: ``engram serve`` in its own process, the SDK as the client.

The server is the production entry point (``python -m engramdb.cli serve``) on a fresh data
folder, with the embedder the options name. The client writes each conversation through
``POST /v1/episodes/batch`` (100 a call, the endpoint's maximum), waits until every vector is
ready (the worker embeds in write order: the last turn written is polled, then every turn is
checked), and asks each question once with ``POST /v1/recall`` (``limit`` 10), timed around the
SDK call: what an agent would wait for, query embedding included (every time: the server keeps no
query vectors, ``NO_QUERY_CACHE``).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engramdb.config import Settings
from engramdb.contract.canonical import hash_scope
from engramdb.core import auth
from engramdb.sdk.bodies import episode_body
from engramdb.sdk.capture import Refused, clean_pair
from engramdb.sdk.client import Client
from engramdb.storage.registry import open_store
from engramdb_bench.documents import host_of
from engramdb_bench.machine import NO_QUERY_CACHE, free_port
from engramdb_bench.versus.corpus import CorpusConversation, CorpusTurn
from engramdb_bench.versus.machine_load import PhaseLoad

Progress = Callable[[str, int, int | None], None]
BATCH = 100
TENANT = "versus"


def scope_of(conversation: str) -> dict[str, Any]:
    """The five scope fields of one conversation: its own participant."""
    return {
        "agentId": "versus",
        "profileId": "locomo",
        "privacyScope": "private",
        "participantScopeHash": hash_scope(["versus", conversation]),
        "sandboxEligible": False,
    }


def episode(turn: CorpusTurn, index: int, scope: dict[str, Any]) -> dict[str, Any]:
    """A turn as an episode body, written as ``engram eval`` writes it: LoCoMo's text as summary and
    userText; BEAM's user message and answer as the SDK stores a completed turn."""
    if "reply" in turn:
        return {**scope, **_sdk_turn(turn, index, scope), "observedAt": turn["observedAt"]}
    return {
        **scope,
        "runtime": "custom",
        "externalSessionId": turn["session"],
        "turnIndex": index,
        "userText": turn["text"],
        "assistantText": "",
        "summary": turn["text"],
        "conversationKind": "direct",
        "visibility": "participant",
        "trustClass": "trusted",
        "originClass": "conversation",
        "observedAt": turn["observedAt"],
        "provenance": "versus",
    }


def _sdk_turn(turn: CorpusTurn, index: int, scope: dict[str, Any]) -> dict[str, object]:
    captured = clean_pair(turn["text"], turn.get("reply", ""))
    if isinstance(captured, Refused):  # the corpus holds only pairs the capture rules keep
        raise ValueError(f"turn {turn['turn']}: {captured.reason}")
    return episode_body(host_of(scope), turn["session"], captured, index, turn["turn"], "versus")


class EngramServer:
    """``engram serve`` on a fresh data folder and a free loopback port, with an admin key."""

    def __init__(self, work: Path, embedder: str) -> None:
        self.home = work / "engram-home"
        shutil.rmtree(self.home, ignore_errors=True)
        settings = Settings(home=self.home, database_url=None)
        store = open_store(settings.storage_url(), **settings.store_options())
        try:
            self.key, _ = auth.create_key(
                store, tenant=TENANT, role="admin", grant={}, label="bench versus", create_tenant=True
            )
        finally:
            store.close()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "ENGRAM_EMBEDDER": embedder, "ENGRAM_HOME": str(self.home), **NO_QUERY_CACHE}
        env.pop("ENGRAM_DATABASE_URL", None)
        self._log = (work / "engram-server.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "engramdb.cli", "serve", "--home", str(self.home), "--port", str(self.port)],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, client: Client, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                client.health()
                return
            except Exception:  # not listening yet (a transport error) or still starting: try again
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"engram serve did not start (log: {self._log.name})") from None
                time.sleep(0.2)

    def peak_rss_bytes(self) -> int | None:
        """The server process's peak resident set (VmHWM), None off Linux."""
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        except OSError:
            return None
        return None

    def disk_bytes(self) -> int:
        return sum(p.stat().st_blocks * 512 for p in self.home.rglob("*") if p.is_file())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


def run(
    corpus: list[CorpusConversation],
    work: Path,
    *,
    embedder: str,
    seed: int,
    warmup: int,
    progress: Progress,
    loads: list[dict[str, Any]],
) -> dict[str, Any]:
    """Serve, write the corpus, ask every question; return the arm's result."""
    with PhaseLoad("engramdb: start") as start:
        server = EngramServer(work, embedder)
        client = Client(server.url, api_key=server.key, timeout=60)
        server.wait_ready(client)
    loads.append(start.summary())
    try:
        with PhaseLoad("engramdb: ingest") as phase:
            written = ingest(client, corpus, progress)
        loads.append(phase.summary())
        disk = server.disk_bytes()
        with PhaseLoad("engramdb: recall") as phase:
            answers = _ask(client, corpus, written.pop("owner"), seed=seed, warmup=warmup, progress=progress)
        loads.append(phase.summary())
        rss = server.peak_rss_bytes()
    finally:
        client.close()
        server.stop()
    return {
        "system": "engramdb",
        "startSeconds": round(start.seconds, 3),
        "ingest": written,
        "recall": {"answers": {"default": answers}},
        "diskBytes": disk,
        "peakRssBytes": rss,
        "embedder": client_embedder(embedder),
    }


def client_embedder(spec: str) -> str:
    named = {
        "minilm": "all-MiniLM-L6-v2 int8 ONNX (onnxruntime, 2 threads)",
        "minilm-fast": "all-MiniLM-L6-v2 int8 ONNX on int8 activations (onnxruntime, 1 thread)",
    }
    return named.get(spec, spec)


def ingest(client: Client, corpus: list[CorpusConversation], progress: Progress) -> dict[str, Any]:
    total = sum(len(c["turns"]) for c in corpus)
    progress("engramdb: write turns", 0, total)
    owner: dict[str, str] = {}  # memory id -> turn id
    stored: dict[str, list[str]] = {}
    last: tuple[str, dict[str, Any]] | None = None
    started = time.perf_counter()
    for conv in corpus:
        scope, index = scope_of(conv["id"]), dict[str, int]()
        bodies, turns = [], []
        for turn in conv["turns"]:
            index[turn["session"]] = index.get(turn["session"], -1) + 1
            bodies.append(episode(turn, index[turn["session"]], scope))
            turns.append(turn["turn"])
        for start in range(0, len(bodies), BATCH):
            for item, turn_id in zip(
                client.write_episode_batch(bodies[start : start + BATCH]).results,
                turns[start : start + BATCH],
                strict=True,
            ):
                if item["status"] not in (200, 201):
                    raise RuntimeError(f"the server refused turn {turn_id}: {item}")
                owner[item["id"]] = turn_id
                stored.setdefault(conv["id"], []).append(turn_id)
                last = (item["id"], scope)
            progress("engramdb: write turns", len(bodies[start : start + BATCH]), None)
    written = time.perf_counter() - started
    progress("engramdb: embed (until searchable)", 0, 1)
    _settle(client, corpus, last)
    seconds = time.perf_counter() - started
    progress("engramdb: embed (until searchable)", 1, None)
    return {
        "turns": total,
        "seconds": round(seconds, 3),
        "turnsPerSecond": round(total / seconds, 2),
        "writeSeconds": round(written, 3),
        "stored": {k: sorted(v) for k, v in stored.items()},
        "owner": owner,
    }


def _settle(
    client: Client, corpus: list[CorpusConversation], last: tuple[str, dict[str, Any]] | None, timeout: float = 3600
) -> None:
    """Wait until every turn's vector is ready: the last one written first (the worker embeds in
    write order), then every conversation's episodes, listed a page at a time."""
    deadline = time.monotonic() + timeout
    while last is not None and client.get_episode(last[0], scope=last[1]).embedding.state != "ready":
        if time.monotonic() > deadline:
            raise TimeoutError("the server did not embed the corpus in time")
        time.sleep(0.05)
    pending = [c["id"] for c in corpus]
    while pending:
        pending = [c for c in pending if not _all_ready(client, scope_of(c))]
        if pending and time.monotonic() > deadline:
            raise TimeoutError(f"conversations without every vector: {pending}")
        if pending:
            time.sleep(0.05)


def _all_ready(client: Client, scope: dict[str, Any]) -> bool:
    cursor = None
    while True:
        page = client.list_episodes(scope=scope, limit=1000, cursor=cursor)
        if any(e.embedding.state != "ready" for e in page.episodes):
            return False
        if page.next_cursor is None:
            return True
        cursor = page.next_cursor


def _ask(
    client: Client,
    corpus: list[CorpusConversation],
    owner: dict[str, str],
    *,
    seed: int,
    warmup: int,
    progress: Progress,
) -> dict[str, dict[str, Any]]:
    questions = [(c["id"], q) for c in corpus for q in c["questions"]]
    random.Random(seed).shuffle(questions)  # the same order as the other systems
    first = scope_of(corpus[0]["id"])
    for i in range(warmup):  # texts no question has: the query-vector cache stays cold for the questions
        client.recall({"query": f"warm-up question {i}", "scope": first, "limit": 10})
    progress("engramdb: questions", 0, len(questions))
    answers: dict[str, dict[str, Any]] = {}
    for conv, q in questions:
        request = {"query": q["text"], "scope": scope_of(conv), "limit": 10}
        began = time.perf_counter()
        response = client.recall(request)
        ms = (time.perf_counter() - began) * 1000
        answers[q["id"]] = {
            "ms": round(ms, 3),
            "turns": [owner.get(m.id) for m in response.memories],
            "server": response.timings,
        }
        progress("engramdb: questions", 1, None)
    return answers
