"""What the server counts for ``/metrics`` (Prometheus text format, by Prometheus's own client).

One registry for the process: every part records into it where the thing happens (the HTTP
boundary, recall, the embedding worker), and the ``/metrics`` route renders it. Labels are
bounded: routes by their template (``/v1/facts/{fact_id}``), never by the path a client sent.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

REGISTRY = CollectorRegistry(auto_describe=True)
CONTENT_TYPE = CONTENT_TYPE_LATEST

# Recall's own service time is ~1-20 ms at 10k memories: buckets fine there, coarse past a second.
_LATENCY = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = Counter(
    "engram_http_requests",
    "HTTP requests answered, by route template, method and status",
    ["route", "method", "status"],
    registry=REGISTRY,
)
LATENCY = Histogram(
    "engram_http_request_duration_seconds",
    "time from a request's arrival to its answer",
    ["route", "method"],
    buckets=_LATENCY,
    registry=REGISTRY,
)
ERRORS = Counter(
    "engram_http_errors",
    "error answers by problem code (invalid_input, rate_limited, ...)",
    ["code"],
    registry=REGISTRY,
)
RECALL_STAGE = Histogram(
    "engram_recall_stage_seconds",
    "recall's time per stage: embed (the query) and search",
    ["stage"],
    buckets=_LATENCY,
    registry=REGISTRY,
)
RECALL_CANDIDATES = Histogram(
    "engram_recall_candidates",
    "candidates each recall arm returned",
    ["arm"],
    buckets=(0, 1, 5, 10, 25, 50, 100, 200, 500),
    registry=REGISTRY,
)
EMBEDDED = Counter(
    "engram_embedded_rows",
    "rows the embedding worker embedded (memories and record texts)",
    ["kind"],
    registry=REGISTRY,
)
EMBED_SECONDS = Histogram(
    "engram_embed_batch_seconds", "time the embedder took per worker batch", buckets=_LATENCY, registry=REGISTRY
)
JOB_RUNS = Counter(
    "engram_job_runs", "background job passes, by job and outcome (ok, failed)", ["job", "outcome"], registry=REGISTRY
)
BACKLOG = Gauge(
    "engram_embedding_backlog",
    "rows waiting for a vector (pending or failed and due again), all tenants",
    registry=REGISTRY,
)

RECALL_LANE = Gauge(
    "engram_recall_lane",
    "recalls in the recall lane: running (each in a worker thread) and waiting their turn",
    ["state"],
    registry=REGISTRY,
)
RECALLS_ABANDONED = Counter(
    "engram_recalls_abandoned",
    "recalls not run because their client hung up while they waited in the recall lane",
    registry=REGISTRY,
)


def watch_recall_lane(running: Callable[[], float], waiting: Callable[[], float]) -> None:
    """Read the recall lane's running and waiting recalls at each scrape (the latest server started wins)."""
    RECALL_LANE.labels("running").set_function(running)
    RECALL_LANE.labels("waiting").set_function(waiting)


def watch_backlog(count: Callable[[], float]) -> None:
    """Read the embedding backlog with ``count`` at each scrape (the latest server started wins)."""
    BACKLOG.set_function(count)


def render() -> bytes:
    """The registry in the Prometheus text exposition format."""
    return generate_latest(REGISTRY)
