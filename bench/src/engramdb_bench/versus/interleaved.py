"""EngramDB and the reference arm asked the same questions, interleaved question by question.

Both servers run at once, each in its own process; after both have every turn searchable, each
question goes to both, in a fresh random order per question, one request at a time, through the
same client (one ``httpx.Client`` per arm, the same settings): whatever else the machine does
falls on both alike, so their ratio is the number to read. With quiet gaps (``gaps``), the whole
question list is asked again per gap, each request after that many milliseconds of quiet (how an
agent calls: after its model answered).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from engramdb.sdk.client import Client
from engramdb_bench.versus import engram_arm, reference_arm
from engramdb_bench.versus.corpus import CorpusConversation
from engramdb_bench.versus.machine_load import PhaseLoad

Progress = Callable[[str, int, int | None], None]
# (conversation, question) -> the turns answered, best first, and the server's own timings (EngramDB's)
Ask = Callable[[str, str], tuple[list[str], dict[str, float]]]


def run(
    corpus: list[CorpusConversation],
    work: Path,
    *,
    embedder: str,
    reference_embedder: str,
    seed: int,
    warmup: int,
    gaps: tuple[float, ...],
    progress: Progress,
    loads: list[dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """Serve both, write the corpus to both, ask every question of both per gap; return both arms."""
    with PhaseLoad("engramdb + reference: start") as start:
        engram = engram_arm.EngramServer(work, embedder)
        reference = reference_arm.ReferenceServer(work, reference_embedder)
        sdk = Client(engram.url, api_key=engram.key, timeout=60)
        clients = {name: httpx.Client(timeout=60) for name in ("engramdb", "reference")}
        engram.wait_ready(sdk)
        reference.wait_ready(clients["reference"])
    loads.append(start.summary())
    try:
        with PhaseLoad("engramdb: ingest") as phase:
            engram_ingest = engram_arm.ingest(sdk, corpus, progress)
        loads.append(phase.summary())
        with PhaseLoad("reference: ingest") as phase:
            reference_ingest = reference_arm.ingest(clients["reference"], reference.url, corpus, progress)
        loads.append(phase.summary())
        owner = engram_ingest.pop("owner")
        asks: dict[str, Ask] = {
            "engramdb": _engram_ask(clients["engramdb"], engram.url, engram.key, owner),
            "reference": _reference_ask(clients["reference"], reference.url),
        }
        answers = _ask_interleaved(corpus, asks, seed=seed, warmup=warmup, gaps=gaps, progress=progress, loads=loads)
        rss = engram.peak_rss_bytes()
        disk = engram.disk_bytes()
    finally:
        for client in clients.values():
            client.close()
        sdk.close()
        engram.stop()
        reference.stop()
    with PhaseLoad("embedder: batches in-process") as phase:
        ceiling = reference_arm.embedder_throughput(corpus, embedder)
    loads.append(phase.summary())
    measured = {"ingest": (engram_ingest, reference_ingest, ceiling), "answers": answers, "engram": (rss, disk)}
    return _arms(measured, start_seconds=start.seconds, embedders=(embedder, reference_embedder))


def _arms(measured: dict[str, Any], *, start_seconds: float, embedders: tuple[str, str]) -> dict[str, dict[str, Any]]:
    """The three arms' results, shaped as ``engram bench versus`` reports every system."""
    engram_ingest, reference_ingest, ceiling = measured["ingest"]
    rss, disk = measured["engram"]
    common = {"startSeconds": round(start_seconds, 3)}
    return {
        "engramdb": {
            **common,
            "embedder": engram_arm.client_embedder(embedders[0]),
            "system": "engramdb",
            "ingest": engram_ingest,
            "recall": {"answers": measured["answers"]["engramdb"]},
            "diskBytes": disk,
            "peakRssBytes": rss,
        },
        "reference": {
            **common,
            "embedder": engram_arm.client_embedder(embedders[1]),
            "system": "reference",
            "ingest": reference_ingest,
            "recall": {"answers": measured["answers"]["reference"]},
            "diskBytes": 0,
        },
        "embedder": {"system": "embedder", "ingest": ceiling},
    }


def _engram_ask(http: httpx.Client, url: str, key: str, owner: dict[str, str]) -> Ask:
    headers = {"Authorization": f"Bearer {key}"}

    def ask(conversation: str, question: str) -> tuple[list[str], dict[str, float]]:
        body = {"query": question, "scope": engram_arm.scope_of(conversation), "limit": 10}
        answer = http.post(f"{url}/v1/recall", json=body, headers=headers)
        answer.raise_for_status()
        found = answer.json()
        return [owner.get(m["id"], "") for m in found["memories"]], dict(found.get("timings") or {})

    return ask


def _reference_ask(http: httpx.Client, url: str) -> Ask:
    def ask(conversation: str, question: str) -> tuple[list[str], dict[str, float]]:
        answer = http.post(f"{url}/search", json={"scope": conversation, "query": question, "limit": 10})
        answer.raise_for_status()
        return list(answer.json()["ids"]), {}

    return ask


def _ask_interleaved(
    corpus: list[CorpusConversation],
    asks: dict[str, Ask],
    *,
    seed: int,
    warmup: int,
    gaps: tuple[float, ...],
    progress: Progress,
    loads: list[dict[str, Any]],
) -> dict[str, dict[str, dict[str, Any]]]:
    """Every question of both arms per gap, the arms in a fresh random order per question."""
    questions = [(c["id"], q) for c in corpus for q in c["questions"]]
    rng = random.Random(seed)
    rng.shuffle(questions)  # the same order as the other systems
    first = corpus[0]["id"]
    for i in range(warmup):  # texts no question has: each arm's query-vector cache stays cold for them
        for ask in asks.values():
            ask(first, f"warm-up question {i}")
    answers: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in asks}
    for gap in gaps:
        mode = mode_name(gap)
        task = f"questions ({mode})"
        progress(task, 0, len(questions))
        with PhaseLoad(f"engramdb + reference: recall, {mode}") as phase:
            per_arm: dict[str, dict[str, Any]] = {name: {} for name in asks}
            for conversation, q in questions:
                for name in rng.sample(sorted(asks), len(asks)):
                    if gap > 0:
                        time.sleep(gap / 1000)
                    began = time.perf_counter()
                    turns, server = asks[name](conversation, q["text"])
                    ms = round((time.perf_counter() - began) * 1000, 3)
                    per_arm[name][q["id"]] = {"ms": ms, "turns": turns, **({"server": server} if server else {})}
                progress(task, 1, None)
        loads.append(phase.summary())
        for name, got in per_arm.items():
            answers[name][mode] = got
    return answers


def mode_name(gap: float) -> str:
    """How a report names a gap: ``back to back``, or ``after 200 ms``."""
    return "back to back" if gap <= 0 else f"after {gap:g} ms"
