"""The reference arm of ``engram bench versus``: the bare pipeline (engramdb_bench.reference) in its
own process, fed the same turns, asked the same questions; and the embedder arm, the same turns
embedded in batches in this process with no server at all (the ceiling of any ingest)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from engramdb.core.embedding import make_embedder
from engramdb_bench.machine import free_port
from engramdb_bench.versus.corpus import CorpusConversation, stored_text

Progress = Callable[[str, int, int | None], None]
BATCH = 100  # turns a write: as the EngramDB arm writes them (the batch endpoint's maximum)


class ReferenceServer:
    """``python -m engramdb_bench.reference`` on a free loopback port."""

    def __init__(self, work: Path, embedder: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = (work / "reference-server.log").open("w")
        command = [sys.executable, "-m", "engramdb_bench.reference", "--port", str(self.port), "--embedder", embedder]
        self.process = subprocess.Popen(command, env=dict(os.environ), stdout=self._log, stderr=subprocess.STDOUT)

    def wait_ready(self, http: httpx.Client, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if http.get(f"{self.url}/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the reference server did not start (log: {self._log.name})")
            time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


def ingest(http: httpx.Client, url: str, corpus: list[CorpusConversation], progress: Progress) -> dict[str, Any]:
    """Write every turn (embedded as it is written: searchable when the call returns)."""
    total = sum(len(c["turns"]) for c in corpus)
    progress("reference: write turns", 0, total)
    started = time.perf_counter()
    for conv in corpus:
        for start in range(0, len(conv["turns"]), BATCH):
            batch = conv["turns"][start : start + BATCH]
            items = [{"id": t["turn"], "text": stored_text(t)} for t in batch]
            http.post(f"{url}/add", json={"scope": conv["id"], "items": items}).raise_for_status()
            progress("reference: write turns", len(batch), None)
    seconds = time.perf_counter() - started
    stored = {c["id"]: sorted(t["turn"] for t in c["turns"]) for c in corpus}
    return {"turns": total, "seconds": round(seconds, 3), "turnsPerSecond": round(total / seconds, 2), "stored": stored}


def embedder_throughput(corpus: list[CorpusConversation], embedder: str, batch: int = 64) -> dict[str, Any]:
    """The same turns embedded in batches of ``batch`` in this process: no HTTP, no store."""
    model = make_embedder(embedder)
    texts = [stored_text(t) for c in corpus for t in c["turns"]]
    model.embed(texts[:batch])  # load and warm the model first: the servers are warm too
    started = time.perf_counter()
    for i in range(0, len(texts), batch):
        model.embed(texts[i : i + batch])
    seconds = time.perf_counter() - started
    return {"turns": len(texts), "seconds": round(seconds, 3), "turnsPerSecond": round(len(texts) / seconds, 2)}
