"""An agent host that traces, for the traces tests: run as its own process (tests/surfaces/traced.py).

It sets OpenTelemetry's SDK up from the standard variables, as a host would, runs one scenario
with EngramDB's SDK inside a span of its own (the agent's turn), exports, and prints that span's
trace id and span id as its last line.

    python -m tests.surfaces.traced_agent URL KEY SCENARIO '{"marker": ...}'
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from engramdb import Client
from tests.factories import episode_body, fact_body


def recall(client: Client, args: dict[str, str]) -> None:
    """One episode written, then recalled (the SDK's CLIENT spans, the server's, recall's stages)."""
    client.write_episode(episode_body("Deploys go out on Fridays after the billing freeze."))
    answer = client.recall({"query": "when do deploys go out?", "limit": 3})
    assert answer.memories, "the recall found nothing"


def broad(client: Client, args: dict[str, str]) -> None:
    """Writes (one queues a model's extraction), a correction, recalls, records and their search,
    each carrying its own marker, for a participant named by a raw user id (args: the markers, by
    where they are planted)."""
    named = {"privacyScope": "private", "sandboxEligible": False, "userId": args["user"]}
    said = f"I keep my passport in the blue drawer {args['text']}"
    client.write_episode(
        episode_body(said, f"Noted {args['text']}", session=args["session"], scope=named), extract=True
    )
    fact = client.write_fact(
        fact_body(
            f"The user keeps the passport in the blue drawer {args['text']}", subject=args["subject"], scope=named
        )
    )
    moved = {"text": f"The passport moved to the safe {args['text']}", "reason": args["text"], "scope": named}
    client.correct_fact(fact.id, moved)
    for query in (f"where is the passport {args['query']}", args["query"]):
        client.recall({"query": query, "scope": named, "explain": True, "sessions": 2, "expand": 2})
    task = {"title": f"Renew {args['property']}", "note": args["property"]}
    client.write_records({"label": "TASK", "mergeBy": ["title"], "data": task, "scope": named})
    where = {"note": {"$contains": args["property"]}}
    client.search_records({"labels": ["TASK"], "where": where, "limit": 5, "scope": named})
    client.search_records({"query": args["query"], "limit": 5, "scope": named})
    time.sleep(0.5)  # the embedding worker's batches, with these texts, while the trace goes on


SCENARIOS: dict[str, Callable[[Client, dict[str, str]], None]] = {"recall": recall, "broad": broad}


def main(url: str, key: str, scenario: str, args: dict[str, str]) -> None:
    provider = TracerProvider(resource=Resource.create())  # OTEL_SERVICE_NAME names it
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    tracer = trace.get_tracer("tests.agent")
    with tracer.start_as_current_span("agent.turn") as turn:
        if "control" in args:  # the positive control: a marker put in an attribute on purpose
            turn.set_attribute("test.control", args["control"])
        with Client(url, key) as client:
            SCENARIOS[scenario](client, args)
        context = turn.get_span_context()
    provider.shutdown()  # exports what is left
    print(json.dumps({"traceId": f"{context.trace_id:032x}", "spanId": f"{context.span_id:016x}"}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))
