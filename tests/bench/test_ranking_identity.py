"""Recall over HTTP returns what it returned before the request path was made faster (issue 23).

The held-out set (bench/heldout) goes through a real server with the default embedder
(MiniLM int8 ONNX); every question is asked over REST, twice (the second time the server may
answer from its cache of query vectors), and a few with ``explain``. Each answer must match
``heldout_rankings.json``, recorded with the code before the change: the same memory ids in the
same order with the same scores (exactly, as JSON numbers), the same session ranking, and the
same whole body (a digest of everything but ``timings``). A few answers are also computed in
process by a fresh service (its own model session, no cache) and must equal the HTTP body.

Recency depends on the moment of the query, so the clock is fixed throughout. Exact floats also
depend on the CPU's kernels (onnxruntime's and BLAS's): the file keeps a fingerprint of the
model's vectors and of a matrix product on the machine that recorded it. On a machine whose
fingerprint differs, scores are compared to 1e-5 and ids may trade places only where their
scores tie to that precision. Record the file again only when recall is meant to change:
``.venv/bin/python -m tests.bench.test_ranking_identity`` (and say why in the commit).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from engramdb import clock
from engramdb.api.loopback import LoopbackServer
from engramdb.api.rest import create_app
from engramdb.config import Settings, tune_process
from engramdb.contract.writes import EpisodeWrite
from engramdb.core import auth
from engramdb.core.embedding import make_embedder
from engramdb.core.service import MemoryService
from engramdb.models.recall import RecallRequest
from engramdb.storage.registry import open_store
from engramdb_bench.datasets import Conversation, load_locomo
from engramdb_bench.documents import documents, episodes
from engramdb_bench.runner import scope_of
from engramdb_bench.targets import OverRest

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "bench" / "heldout" / "conversations.json"
GOLDEN = Path(__file__).with_name("heldout_rankings.json")
NOW = datetime(2026, 12, 1, tzinfo=UTC)  # the clock while questions are asked
LIMIT = 20
EXPLAINED = 10  # every tenth question is also asked with explain, and answered in process
TOLERANCE = 1e-5  # on a machine whose fingerprint differs from the recording one's


@contextmanager
def fixed_clock(moment: datetime) -> Iterator[None]:
    """Hold ``engramdb.clock`` at ``moment`` (a controllable clock: what recency reads)."""
    real = clock.utc_now
    clock.utc_now = lambda: moment
    try:
        yield
    finally:
        clock.utc_now = real


def _digest(body: dict[str, Any]) -> str:
    kept = {k: v for k, v in body.items() if k != "timings"}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _ranking(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "memories": [[m["id"][:16], m["score"]] for m in body["memories"]],  # the digest has whole ids
        "sessions": [[s["sessionId"], s["score"]] for s in body["sessions"] or []],
        "digest": _digest(body),
    }


def fingerprint(texts: list[str]) -> str:
    """What exact scores depend on besides the code: the model's vectors on this CPU, and a
    float32 matrix-vector product as the vector arm computes it (one BLAS thread, as served)."""
    tune_process()
    vectors = make_embedder("minilm").embed(texts)
    scores = vectors[1:] @ vectors[0]
    return hashlib.sha256(np.ascontiguousarray(vectors).tobytes() + scores.tobytes()).hexdigest()


def probe_texts() -> list[str]:
    conv = load_locomo(HELDOUT).conversations[0]  # type: ignore[index]  # a list for LoCoMo files
    return [q.text for q in conv.questions[:16]] + [d.text for d in documents(conv, "turn")[:64]]


@dataclass
class Collected:
    """Per question, its HTTP answers (one per round, then the explained one if any); the
    explained answers computed in process; the machine's fingerprint."""

    asked: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    in_process: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)  # (direct, http)
    fingerprint: str = ""


def collect(home: Path, *, rounds: int = 2) -> Collected:
    """Serve a fresh store, write the held-out set, ask every question ``rounds`` times over REST.

    The clock is fixed throughout: recency reads it, and ``recordedAt`` is part of the body.
    """
    with fixed_clock(NOW):
        return _collect(home, rounds)


def _collect(home: Path, rounds: int) -> Collected:
    settings = Settings(home=home, database_url=None, embedder="minilm")
    store = open_store(settings.storage_url(), **settings.store_options())
    store.tenant("heldout", create=True)
    key, _ = auth.create_key(store, tenant="heldout", role="admin", grant={}, label="ranking identity")
    server = LoopbackServer(create_app(settings, store=store))
    server.start()
    writer = OverRest(server.url, key, poll_seconds=0.05)
    http = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)
    # The reference: a fresh service in this process, with its own model session and no cache.
    direct = MemoryService(store, make_embedder("minilm"), settings.model_copy(update={"query_cache_size": 0}))
    caller = auth.authenticate(store, key)
    out = Collected(fingerprint=fingerprint(probe_texts()))
    try:
        for conv in load_locomo(HELDOUT).conversations:
            scope = scope_of("heldout", conv.conversation_id)
            writer.write(_bodies(conv, scope))
            _settle(writer, scope)
            for n, q in enumerate(conv.questions):
                qid = f"{conv.conversation_id}/{q.question_id}"
                request = {"query": q.text, "scope": scope, "limit": LIMIT, "sessions": LIMIT}
                out.asked[qid] = [_ask(http, request) for _ in range(rounds)]
                if n % EXPLAINED == 0:
                    explained = {**request, "explain": True}
                    out.asked[qid].append(_ask(http, explained))
                    answer = direct.reads.recall(caller, RecallRequest.model_validate(explained))
                    out.in_process[qid] = (_ranking(answer.model_dump(mode="json", by_alias=True)), out.asked[qid][-1])
    finally:
        http.close()
        writer.close()
        server.stop()
    return out


def _settle(writer: OverRest, scope: dict[str, Any]) -> None:
    """Wait until every episode of the scope has its vector (one listing a poll, not a read per episode)."""
    deadline = time.monotonic() + 300
    while any(e.embedding.state != "ready" for e in writer.client.list_episodes(scope=scope, limit=1000).episodes):
        assert time.monotonic() < deadline, "the server did not embed the held-out set in time"
        time.sleep(0.05)


def _bodies(conv: Conversation, scope: dict[str, Any]) -> list[EpisodeWrite]:
    """The conversation's turns as episodes, numbered within their session (as ``engram eval`` writes them)."""
    bodies: list[EpisodeWrite] = []
    next_turn: Counter[str] = Counter()
    for doc in documents(conv, "turn"):
        carried = episodes(doc, scope, next_turn[doc.session_id], provenance="heldout")
        next_turn[doc.session_id] += len(carried)
        bodies += carried
    return bodies


def _ask(http: httpx.Client, request: dict[str, Any]) -> dict[str, Any]:
    response = http.post("/v1/recall", json=request)
    response.raise_for_status()
    return _ranking(response.json())


def same_ranking(got: list[list[Any]], want: list[list[Any]], tolerance: float) -> bool:
    """True when two rankings ``[[id, score], ...]`` are equal, scores to ``tolerance``: position by
    position the scores agree, and where the ids differ, the ids trade places among scores that tie."""
    if len(got) != len(want) or any(abs(g[1] - w[1]) > tolerance for g, w in zip(got, want, strict=True)):
        return False
    wanted = {i: score for i, score in want}
    last = want[-1][1] if want else 0.0
    for (gid, score), (wid, _) in zip(got, want, strict=True):
        if gid != wid and abs(wanted.get(gid, last) - score) > 2 * tolerance:
            return False
    return True


def _matches(got: dict[str, Any], want: dict[str, Any], exact: bool) -> bool:
    if exact:
        return got == want  # ids, order, scores, sessions and the whole body
    return all(same_ranking(got[part], want[part], TOLERANCE) for part in ("memories", "sessions"))


@pytest.mark.slow
def test_recall_over_http_returns_the_recorded_rankings(tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text())
    recorded: dict[str, list[dict[str, Any]]] = golden["rankings"]
    run = collect(tmp_path / "home")
    exact = run.fingerprint == golden["fingerprint"]  # the CPU that recorded the file: exact floats
    assert len(run.asked) == len(recorded) == 150  # every held-out question (bench/heldout/README.md)
    found = sum(len(answers[0]["memories"]) for answers in run.asked.values())
    assert found == 150 * LIMIT  # positive control: every question found its 20 memories
    for qid, want in recorded.items():
        first, again, *explained = run.asked[qid]
        assert _matches(first, want[0], exact), (qid, exact)
        assert again == first, f"{qid}: asked again (query vector from the cache)"
        assert len(explained) == len(want) - 1, qid
        assert all(_matches(g, w, exact) for g, w in zip(explained, want[1:], strict=True)), f"{qid}: with explain"
    assert len(run.in_process) == sum(len(want) > 1 for want in recorded.values()) == 18
    for qid, (direct, over_http) in run.in_process.items():
        assert direct == over_http, f"{qid}: the HTTP body differs from the service's own answer"


def test_rankings_compare_to_a_tolerance_only_where_scores_tie() -> None:
    want = [["a", 0.9], ["b", 0.5], ["c", 0.5 - 1e-6], ["d", 0.1]]
    assert same_ranking(want, want, TOLERANCE)
    assert same_ranking([["a", 0.9], ["c", 0.5], ["b", 0.5 - 1e-6], ["d", 0.1]], want, TOLERANCE)  # a tie swapped
    assert not same_ranking([["a", 0.9], ["d", 0.5], ["c", 0.5], ["b", 0.1]], want, TOLERANCE)  # no tie: wrong order
    assert not same_ranking([["a", 0.9], ["b", 0.5 + 1e-4], ["c", 0.5], ["d", 0.1]], want, TOLERANCE)  # a score moved
    assert not same_ranking(want[:3], want, TOLERANCE)


def record() -> None:
    """Write ``heldout_rankings.json`` from the code as it is now (one round per question)."""
    with tempfile.TemporaryDirectory(prefix="engram-rankings-") as folder:
        run = collect(Path(folder) / "home", rounds=1)
    write_golden(run.fingerprint, run.asked)


def write_golden(machine: str, rankings: dict[str, Any]) -> None:
    """One question a line, so a diff of the file stays readable."""
    lines = [f"{json.dumps(qid)}: {json.dumps(answers, separators=(',', ':'))}" for qid, answers in rankings.items()]
    GOLDEN.write_text('{"fingerprint": ' + json.dumps(machine) + ', "rankings": {\n' + ",\n".join(lines) + "\n}}\n")
    print(f"recorded {len(rankings)} questions in {GOLDEN}", file=sys.stderr)


if __name__ == "__main__":
    record()
