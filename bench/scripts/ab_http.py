"""Interleaved A/B of recall end to end over HTTP: two or more builds of EngramDB side by side.

Each arm is a source tree (``src`` of a checkout: ``git archive COMMIT src | tar -x -C DIR``)
with options. Every arm gets its own copy of one prepared data folder (LoCoMo, turn documents,
all ten conversations, embedded once), its own server process (``engram serve`` of that tree,
unless a server option asks for something else) and its own client process (that tree's SDK, or
plain httpx). The coordinator then asks every question of every round to every arm, the arms in a
fresh random order per question, one request at a time: whatever else the machine is doing
falls on all arms alike, and a paired difference per question says which arm is faster.

    python bench/scripts/ab_http.py --arm base=/tmp/src-base --arm new=src --rounds 2 \
        --out bench/out/ab_http.json

Arm options after ``@``, comma-separated: ``client=httpx|sdk`` (default sdk), ``loop=asyncio|uvloop``,
``http=h11|httptools``, ``access_log=false``, ``env:NAME=VALUE``, ``home=DIR`` (this arm's own copy of
the prepared data, e.g. re-embedded with another embedder by ``engram reembed``). Times are the client's wall time
per request (perf_counter around the call); ``embedMs`` and ``searchMs`` are the server's own.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # the checkout (this file is bench/scripts/)
DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "locomo" / "locomo10.json"

PREPARE = r"""
import json, sys
from collections import Counter
from pathlib import Path
from engramdb.config import Settings
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import make_embedder
from engramdb.core.service import MemoryService
from engramdb_bench.datasets import load_locomo
from engramdb_bench.documents import documents, episodes
from engramdb_bench.runner import scope_of
from engramdb.jobs.embedding import embed_batch
from engramdb.storage.registry import open_store

home, data = Path(sys.argv[1]), Path(sys.argv[2])
settings = Settings(home=home, database_url=None)
store = open_store(settings.storage_url(), **settings.store_options())
tenant = store.tenant("bench", create=True)
key, _ = auth.create_key(store, tenant="bench", role="admin", grant={}, label="ab_http")
embedder = make_embedder("minilm")
service = MemoryService(store, embedder, settings)
caller = Caller(tenant="bench", key_id="ab_http", role="admin")
questions = []
for conv in load_locomo(data).conversations:
    scope = scope_of("locomo", conv.conversation_id)
    bodies, turn = [], Counter()
    for doc in documents(conv, "turn"):
        carried = episodes(doc, scope, turn[doc.session_id], provenance="ab_http")
        turn[doc.session_id] += len(carried)
        bodies += carried
    for start in range(0, len(bodies), 500):
        service.writes.write_episodes(caller, bodies[start : start + 500])
    while embed_batch(tenant, embedder, 256):
        pass
    questions += [{"id": f"{conv.conversation_id}/{q.question_id}", "query": q.text, "scope": scope,
                   "category": q.category} for q in conv.questions
                  if q.skip_reason is None and q.category != "adversarial"]
store.close()
(home / "ab_http.json").write_text(json.dumps({"key": key, "questions": questions}))
"""

SERVER = r"""
import logging, sys
import uvicorn
from engramdb.api.rest import create_app
from engramdb.config import Settings, tune_process
from engramdb.logs import configure_logging
from engramdb.storage.registry import open_store
home, port, loop, http, access_log = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5] == "true"
tune_process()
configure_logging(logging.INFO, sys.stdout)
settings = Settings(home=home, database_url=None)
store = open_store(settings.storage_url(), **settings.store_options())
uvicorn.run(create_app(settings, store=store), host="127.0.0.1", port=port, log_config=None, log_level="info",
            loop=loop, http=http, access_log=access_log,
            timeout_keep_alive=120)  # engram serve's (engramdb/api/keep_alive.py); a base arm may predate it
"""

CLIENT = r"""
import json, sys, time
url, kind, folder = sys.argv[1], sys.argv[2], sys.argv[3]
bench = json.load(open(folder + "/ab_http.json"))
questions, key = bench["questions"], bench["key"]
if kind == "sdk":
    from engramdb import Client
    client = Client(url, api_key=key)
    def ask(q):
        answer = client.recall({"query": q["query"], "scope": q["scope"], "limit": 10})
        return [m.id for m in answer.memories], answer.timings
else:
    import httpx
    client = httpx.Client(base_url=url, headers={"Authorization": "Bearer " + key}, timeout=30)
    def ask(q):
        response = client.post("/v1/recall", json={"query": q["query"], "scope": q["scope"], "limit": 10})
        response.raise_for_status()
        body = response.json()
        return [m["id"] for m in body["memories"]], body["timings"]
print("ready", flush=True)
for line in sys.stdin:
    q = questions[int(line)]
    started = time.perf_counter()
    ids, timings = ask(q)
    wall = (time.perf_counter() - started) * 1000
    print(json.dumps([wall, timings.get("embedMs", 0.0), timings.get("searchMs", 0.0), ids[:10]]), flush=True)
"""


@dataclass
class Arm:
    """One build under test: its source tree, options, processes and measurements."""

    name: str
    src: Path
    client: str = "sdk"
    server: dict[str, str] = field(default_factory=dict)  # loop, http, access_log
    env: dict[str, str] = field(default_factory=dict)
    home: Path | None = None  # prepared data of its own (default: the shared one)
    port: int = 0
    procs: list[subprocess.Popen[str]] = field(default_factory=list)
    rows: list[tuple[int, int, float, float, float]] = field(default_factory=list)  # round, q, wall, embed, search
    rankings: dict[int, list[str]] = field(default_factory=dict)

    def environ(self) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": str(self.src), **self.env}


def parse_arm(text: str) -> Arm:
    name, _, rest = text.partition("=")
    src, _, options = rest.partition("@")
    arm = Arm(name, Path(src).resolve())
    for option in filter(None, options.split(",")):
        key, _, value = option.partition("=")
        if key == "client":
            arm.client = value
        elif key in ("loop", "http", "access_log"):
            arm.server[key] = value
        elif key.startswith("env:"):
            arm.env[key[4:]] = value
        elif key == "home":
            arm.home = Path(value).resolve()
        else:
            raise SystemExit(f"unknown arm option {key!r}")
    return arm


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prepare(home: Path, data: Path) -> None:
    if (home / "ab_http.json").exists():
        return
    print(f"preparing {home} from {data} (embeds every turn once)", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-c", PREPARE, str(home), str(data)],
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )


def start(arm: Arm, home: Path, work: Path) -> None:
    folder = work / arm.name
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(arm.home or home, folder)
    arm.port = free_port()
    log = (work / f"{arm.name}.log").open("w")
    if arm.server:
        command = [
            sys.executable,
            "-c",
            SERVER,
            str(folder),
            str(arm.port),
            arm.server.get("loop", "auto"),
            arm.server.get("http", "auto"),
            arm.server.get("access_log", "true"),
        ]
    else:  # the production entry point
        command = [sys.executable, "-m", "engramdb.cli", "serve", "--home", str(folder), "--port", str(arm.port)]
    arm.procs.append(subprocess.Popen(command, env=arm.environ(), stdout=log, stderr=subprocess.STDOUT, text=True))
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", arm.port), timeout=1):
                break
        except OSError:
            if time.monotonic() > deadline or arm.procs[0].poll() is not None:
                raise SystemExit(f"server of arm {arm.name} did not start: see {work}/{arm.name}.log") from None
            time.sleep(0.2)
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, f"http://127.0.0.1:{arm.port}", arm.client, str(folder)],
        env=arm.environ(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    arm.procs.append(client)
    assert client.stdout is not None and client.stdout.readline().strip() == "ready"
    signal_all(arm, signal.SIGSTOP)


def ask(arm: Arm, index: int) -> list[Any]:
    """Wake the arm's processes, ask one question, freeze them again (SIGSTOP): an idle server's
    threads, onnxruntime's spinning pool among them, would otherwise take a core from the arm
    being measured (two live servers doubled each other's p50 on this 2-core machine)."""
    client = arm.procs[1]
    assert client.stdin is not None and client.stdout is not None
    signal_all(arm, signal.SIGCONT)
    client.stdin.write(f"{index}\n")
    client.stdin.flush()
    answer = list(json.loads(client.stdout.readline()))
    signal_all(arm, signal.SIGSTOP)
    return answer


def signal_all(arm: Arm, sig: signal.Signals) -> None:
    for proc in arm.procs:
        os.kill(proc.pid, sig)


def stop(arm: Arm) -> None:
    signal_all(arm, signal.SIGCONT)
    for proc in reversed(arm.procs):
        if proc.stdin:
            proc.stdin.close()
        proc.terminate()
        proc.wait(10)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summary(arm: Arm) -> dict[str, float]:
    wall = [r[2] for r in arm.rows]
    other = [r[2] - r[3] - r[4] for r in arm.rows]
    return {
        "n": len(wall),
        "p50": pct(wall, 50),
        "p95": pct(wall, 95),
        "p99": pct(wall, 99),
        "mean": statistics.fmean(wall),
        "embedP50": pct([r[3] for r in arm.rows], 50),
        "searchP50": pct([r[4] for r in arm.rows], 50),
        "otherP50": pct(other, 50),
    }


def paired(base: Arm, other: Arm, seed: int) -> dict[str, Any]:
    """Median of the per-request differences (other - base), with a bootstrap 95 % interval."""
    mine = {(r[0], r[1]): r[2] for r in base.rows}
    diffs = [r[2] - mine[(r[0], r[1])] for r in other.rows]
    rng = random.Random(seed)
    boots = sorted(statistics.median(rng.choices(diffs, k=len(diffs))) for _ in range(400))
    return {
        "medianDiffMs": statistics.median(diffs),
        "ci95": [boots[10], boots[389]],
        "p50DiffMs": pct([r[2] for r in other.rows], 50) - pct([r[2] for r in base.rows], 50),
    }


def main() -> None:
    args = _arguments()
    arms = [parse_arm(a) for a in args.arm]
    prepare(args.home, args.data)
    questions = json.loads((args.home / "ab_http.json").read_text())["questions"]
    work = args.home.parent / "runs"
    work.mkdir(parents=True, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    try:
        for arm in arms:
            start(arm, args.home, work)
        loads = interleave(arms, len(questions), args)
    finally:
        for arm in arms:
            stop(arm)
    result: dict[str, Any] = {
        "started": started,
        "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "command": " ".join(sys.argv),
        "loadavg": loads,
        "cpus": os.cpu_count(),
        "arms": {
            a.name: {"src": str(a.src), "client": a.client, "server": a.server, "env": a.env, **summary(a)}
            for a in arms
        },
        "paired": {a.name: paired(arms[0], a, args.seed) for a in arms[1:]},
        "sameRankings": {a.name: a.rankings == arms[0].rankings for a in arms[1:]},
    }
    report(result, arms[0].name)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arm", action="append", required=True, help="NAME=SRC[@option,...]")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--home", type=Path, default=Path("/tmp/engram-ab-http/home"), help="prepared data (kept)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=0, help="questions per round (0: all 1,536)")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--block", type=int, default=1, help="questions an arm answers in a row before the next arm takes the same ones"
    )
    parser.add_argument("--out", type=Path)
    return parser.parse_args()


def interleave(arms: list[Arm], questions: int, args: argparse.Namespace) -> list[tuple[float, float, float]]:
    """Warm every arm up, then ask each round's questions of every arm in turn (a fresh random order
    of arms per block); return the load average at each round's start and at the end."""
    rng = random.Random(args.seed)
    loads: list[tuple[float, float, float]] = []
    for i in range(args.warmup):
        for arm in arms:
            ask(arm, i % questions)
    order = list(range(questions))
    for round_ in range(args.rounds):
        loads.append(os.getloadavg())
        rng.shuffle(order)
        chosen = order[: args.queries or None]
        for block in range(0, len(chosen), args.block):
            for arm in rng.sample(arms, len(arms)):
                for index in chosen[block : block + args.block]:
                    wall, embed, search, ids = ask(arm, index)
                    arm.rows.append((round_, index, wall, embed, search))
                    arm.rankings.setdefault(index, ids)
        print(f"round {round_ + 1}/{args.rounds} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    loads.append(os.getloadavg())
    return loads


def report(result: dict[str, Any], base: str) -> None:
    """Print each arm's percentiles and each arm's paired difference from the first."""
    print(f"{'arm':<14}{'p50':>8}{'p95':>8}{'p99':>8}{'embed':>8}{'search':>8}{'other':>8}")
    for name, s in result["arms"].items():
        print(
            f"{name:<14}{s['p50']:8.2f}{s['p95']:8.2f}{s['p99']:8.2f}{s['embedP50']:8.2f}"
            f"{s['searchP50']:8.2f}{s['otherP50']:8.2f}"
        )
    for name, p in result["paired"].items():
        print(
            f"{name} - {base}: median paired diff {p['medianDiffMs']:+.3f} ms "
            f"(95% {p['ci95'][0]:+.3f} .. {p['ci95'][1]:+.3f}); same top-10 ids: {result['sameRankings'][name]}"
        )
    print(f"load average (1, 5, 15 min) at each round's start and at the end: {result['loadavg']}")


if __name__ == "__main__":
    main()
