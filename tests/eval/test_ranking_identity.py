"""Recall over HTTP returns what it returned before the request path was made faster (issue 23).

The held-out set (bench/heldout) goes through a real server with the default embedder
(MiniLM int8 ONNX); every question is asked over REST, twice (the second time the server may
answer from its cache of query vectors), and a few with ``explain``. Each answer must match
``heldout_rankings.json``, recorded with the code before the change: the same memory ids in the
same order with the same scores (exactly, as JSON numbers), the same session ranking, and the
same whole body (a digest of everything but ``timings``).

Recency depends on the moment of the query, so the clock is fixed while the questions are asked.
Record the file again only when recall is meant to change:
``.venv/bin/python -m tests.eval.test_ranking_identity`` (and say why in the commit).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from engramdb import clock
from engramdb.api.loopback import LoopbackServer
from engramdb.api.rest import create_app
from engramdb.config import Settings
from engramdb.contract.events import EpisodeWrite
from engramdb.core import auth
from engramdb.eval.datasets import Conversation, load_locomo
from engramdb.eval.documents import documents, episodes
from engramdb.eval.runner import scope_of
from engramdb.eval.targets import OverRest
from engramdb.storage.registry import open_store

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "bench" / "heldout" / "conversations.json"
GOLDEN = Path(__file__).with_name("heldout_rankings.json")
NOW = datetime(2026, 12, 1, tzinfo=UTC)  # the clock while questions are asked
LIMIT = 20
EXPLAINED = 10  # every tenth question is also asked with explain


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


def collect(home: Path, *, rounds: int = 2) -> dict[str, Any]:
    """Serve a fresh store, write the held-out set, ask every question ``rounds`` times over REST;
    return question id -> its rankings (one per round, then the explained one if any).

    The clock is fixed throughout: recency reads it, and ``recordedAt`` is part of the body.
    """
    with fixed_clock(NOW):
        return _collect(home, rounds)


def _collect(home: Path, rounds: int) -> dict[str, Any]:
    settings = Settings(home=home, database_url=None, embedder="minilm")
    store = open_store(settings.storage_url(), **settings.store_options())
    store.tenant("heldout", create=True)
    key, _ = auth.create_key(store, tenant="heldout", role="admin", grant={}, label="ranking identity")
    server = LoopbackServer(create_app(settings, store=store))
    server.start()
    writer = OverRest(server.url, key, poll_seconds=0.05)
    asked: dict[str, Any] = {}
    http = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)
    try:
        for conv in load_locomo(HELDOUT).conversations:
            scope = scope_of("heldout", conv.conversation_id)
            writer.write(_bodies(conv, scope))
            writer.settle()
            for n, q in enumerate(conv.questions):
                request = {"query": q.text, "scope": scope, "limit": LIMIT, "sessions": LIMIT}
                answers = [_ask(http, request) for _ in range(rounds)]
                if n % EXPLAINED == 0:
                    answers.append(_ask(http, {**request, "explain": True}))
                asked[f"{conv.conversation_id}/{q.question_id}"] = answers
    finally:
        http.close()
        writer.close()
        server.stop()
    return asked


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


@pytest.mark.slow
def test_recall_over_http_returns_the_recorded_rankings(tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text())
    asked = collect(tmp_path / "home")
    assert len(asked) == len(golden) == 150  # every held-out question (bench/heldout/README.md)
    found = sum(len(answers[0]["memories"]) for answers in asked.values())
    assert found == 150 * LIMIT  # positive control: every question found its 20 memories
    for qid, recorded in golden.items():
        first, again, *explained = asked[qid]
        assert first == recorded[0], qid  # ids, order, scores, sessions and the whole body
        assert again == recorded[0], f"{qid}: asked again (query vector from the cache)"
        assert explained == recorded[1:], f"{qid}: with explain"


def record() -> None:
    """Write ``heldout_rankings.json`` from the code as it is now (one round per question)."""
    with tempfile.TemporaryDirectory(prefix="engram-rankings-") as folder:
        asked = collect(Path(folder) / "home", rounds=1)
    lines = [f"{json.dumps(qid)}: {json.dumps(answers, separators=(',', ':'))}" for qid, answers in asked.items()]
    GOLDEN.write_text("{\n" + ",\n".join(lines) + "\n}\n")  # one question a line: diffs stay readable
    print(f"recorded {len(asked)} questions in {GOLDEN}", file=sys.stderr)


if __name__ == "__main__":
    record()
