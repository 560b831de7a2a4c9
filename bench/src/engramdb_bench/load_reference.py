"""The reference arm of ``engram bench load``: the bare pipeline (``python -m engramdb_bench.reference``:
one Starlette route, the same embedder, an exact dot product) under the same open-loop schedule,
started as ``engram bench versus`` starts it (versus.reference_arm.ReferenceServer).

It is offered recalls only: its capacity is the floor EngramDB's is read against, as a ratio
measured in the same run (``capacity``: the highest offered rate served whole, with p99 under
100 ms, nothing refused and no error). Its memories are the same synthetic turns, as the text
EngramDB stores for each (``episode_text``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from engramdb.core.rows import episode_text
from engramdb.errors import EngramError
from engramdb_bench.synthetic_corpus import episode_bodies

P99_LIMIT_MS = 100.0
SCOPE = "load"


def capacity(rows: Sequence[dict[str, Any]]) -> float:
    """The highest offered rate served whole (achieved within 5%) with p99 under 100 ms, nothing
    refused and no error; 0 when none was."""
    held = [
        row["offeredPerS"]
        for row in rows
        if row["p99Ms"] < P99_LIMIT_MS
        and row["refused"] == 0
        and row["errors"] == 0
        and row["achievedPerS"] >= 0.95 * row["offeredPerS"]
    ]
    return float(max(held, default=0.0))


def fill(url: str, memories: int, seed: int) -> float:
    """Add the load's memories to the reference at ``url`` (embedded as they arrive, 100 a call);
    return the seconds it took."""
    started = time.perf_counter()
    items = [item(body) for body in episode_bodies(memories, seed)]
    with httpx.Client(base_url=url, timeout=600) as http:
        for at in range(0, len(items), 100):
            answer = http.post("/add", json={"scope": SCOPE, "items": items[at : at + 100]})
            if answer.status_code != 200:
                raise EngramError(f"the reference refused the fill: {answer.status_code}")
    return time.perf_counter() - started


def item(body: dict[str, Any]) -> dict[str, str]:
    """An episode body as the reference's item: an id, and the text EngramDB would store."""
    text = episode_text(body.get("summary", ""), body.get("userText", ""), body.get("assistantText", ""))
    return {"id": f"{body['externalSessionId']}-{body['turnIndex']}", "text": text}


def recall_request(query: str) -> tuple[str, dict[str, Any]]:
    return "/search", {"scope": SCOPE, "query": query, "limit": 8}


def write_request(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "/add", {"scope": SCOPE, "items": [item(body)]}


Requests = tuple[Callable[[str], tuple[str, dict[str, Any]]], Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]]
REFERENCE: Requests = (recall_request, write_request)
ENGRAMDB: Requests = (
    lambda query: ("/v1/recall", {"query": query, "limit": 8}),
    lambda body: ("/v1/episodes", body),
)
