"""Traces (issue 36): a recall through the SDK is one trace from the agent's span to recall's
stages, received and decoded by a real OTLP/HTTP receiver on loopback (tests/otlp.py).

The server is ``engram serve`` started with the standard variables; the agent host is a process
that traces with OpenTelemetry's SDK (tests/surfaces/traced_agent.py). With no endpoint (or the
SDK disabled, or the ``otel`` extra missing) nothing is traced, and the SDK never loads
OpenTelemetry for a host that has not.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from engramdb import Client, MemorySession, traces
from tests.factories import episode_body, scope_fields
from tests.otlp import Receiver, Span
from tests.sdk.helpers import host_for
from tests.surfaces.traced import ROOT, ServeProcess, otel_env, run_agent

STAGES = {
    "engramdb.recall.embed",
    "engramdb.recall.search",
    "engramdb.recall.arms",
    "engramdb.recall.dense",
    "engramdb.recall.lexical",
    "engramdb.recall.fusion",
    "engramdb.recall.features",
}


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


@pytest.fixture(scope="module")
def served(receiver: Receiver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    server = ServeProcess(tmp_path_factory.mktemp("traced") / "home", otel_env(receiver.url, "engramdb"))
    yield server
    server.stop()


def _trace(spans: list[Span], trace_id: str) -> dict[str, Span]:
    return {s.span_id: s for s in spans if s.trace_id == trace_id}


def _one(spans: dict[str, Span], name: str, parent: Span | None = None) -> Span:
    found = [s for s in spans.values() if s.name == name and (parent is None or s.parent_id == parent.span_id)]
    assert len(found) == 1, (name, sorted(s.name for s in spans.values()))
    return found[0]


def test_a_recall_through_the_sdk_is_one_trace_from_the_agent_to_recalls_stages(
    receiver: Receiver, served: ServeProcess
) -> None:
    ids = run_agent(otel_env(receiver.url, "agent-host"), served.url, served.keys["agent"], "recall")
    wanted = {"agent.turn", "POST /v1/recall", "engramdb.recall", *STAGES}
    spans = _trace(
        receiver.wait_for(lambda got: wanted <= {s.name for s in _trace(got, ids["traceId"]).values()}), ids["traceId"]
    )

    turn = _one(spans, "agent.turn")
    assert turn.parent_id == "" and turn.span_id == ids["spanId"] and turn.service == "agent-host"
    sdk = _one(spans, "POST /v1/recall", turn)  # the SDK's CLIENT span, in the agent's turn
    assert sdk.kind == "CLIENT" and sdk.service == "agent-host" and sdk.scope == "engramdb.sdk"
    assert sdk.attributes["url.template"] == "/v1/recall" and sdk.attributes["http.response.status_code"] == 200
    assert sdk.attributes["engramdb.operation"] == "recall"
    server = _one(spans, "POST /v1/recall", sdk)  # the server's, continuing the SDK's traceparent
    assert server.kind == "SERVER" and server.service == "engramdb"
    assert server.attributes["http.route"] == "/v1/recall" and server.attributes["http.response.status_code"] == 200
    operation = _one(spans, "engramdb.recall", server)
    assert operation.attributes["engramdb.tenant"] == "t1" and operation.attributes["engramdb.key.role"] == "agent"

    embed = _one(spans, "engramdb.recall.embed", operation)
    assert embed.attributes["gen_ai.operation.name"] == "embeddings"
    assert embed.attributes["gen_ai.request.model"].startswith("hashing")
    assert embed.attributes["gen_ai.embeddings.dimension.count"] > 0
    search = _one(spans, "engramdb.recall.search", operation)
    arms = _one(spans, "engramdb.recall.arms", search)
    assert arms.attributes["engramdb.recall.statuses"] == ["active"]  # the lifecycle filter, before scoring
    assert arms.attributes["engramdb.recall.lexical.count"] >= 1
    assert _one(spans, "engramdb.recall.dense", arms).attributes["engramdb.recall.count"] >= 0
    # SQLite reads the arms apart: the lexical arm is the recall's, as the embedding is (no model ran
    # here, a hashing embedder: the recall's thread ran it; a model's run starts it on a helper).
    assert _one(spans, "engramdb.recall.lexical", operation).attributes["engramdb.recall.count"] >= 1
    assert _one(spans, "engramdb.recall.fusion", search).attributes["engramdb.recall.fused"] >= 1
    _one(spans, "engramdb.recall.features", search)
    assert search.attributes["engramdb.recall.hits"] >= 1

    # The write before it: the same trace, down to its transaction.
    wrote = _one(spans, "POST /v1/episodes", _one(spans, "POST /v1/episodes", turn))
    written = _one(spans, "engramdb.write.episodes", _one(spans, "engramdb.write_episode", wrote))
    assert written.attributes == {"engramdb.write.rows": 1, "engramdb.write.created": 1}
    # Control: the spans of other traces are not counted in this one.
    assert all(s.trace_id == ids["traceId"] for s in spans.values())


def test_the_embedding_worker_traces_its_batches(receiver: Receiver, served: ServeProcess) -> None:
    with served.client() as http:
        assert http.post("/v1/episodes", json=episode_body("The staging database is Postgres 17.")).status_code == 201
    spans = receiver.wait_for(lambda got: any(s.name == "engramdb.job.embedding" for s in got))
    batch = next(s for s in spans if s.name == "engramdb.job.embedding")
    assert batch.parent_id == "" and batch.service == "engramdb"  # background work: a trace of its own
    assert batch.attributes["gen_ai.operation.name"] == "embeddings"
    assert batch.attributes["engramdb.embedding.rows"] >= 1 and batch.attributes["engramdb.embedding.kind"] == "memory"


def test_the_sdk_carries_the_callers_context_into_a_session_and_a_client(
    receiver: Receiver, served: ServeProcess, tmp_path: Path
) -> None:
    """The host traces without setting a global provider: no CLIENT span of the SDK's, yet the
    requests carry the host's span, from a Client and from a MemorySession's recall thread."""
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces")))
    session = MemorySession(
        served.url,
        api_key=served.keys["agent"],
        host=host_for(scope_fields()),
        session_id="s-traced",
        profile_dir=tmp_path / "profile",
        recall_timeout=5.0,
    )
    with provider.get_tracer("tests.host").start_as_current_span("host.turn") as turn:
        with Client(served.url, served.keys["agent"]) as client:
            client.recall("what do we deploy on fridays")
        assert session.recall("what do we deploy on fridays").error is None
    session.close()
    provider.shutdown()
    control = f"untraced-{uuid.uuid4().hex[:8]}"
    assert httpx.post(
        f"{served.url}/v1/recall",
        json={"query": "anything"},
        headers={"Authorization": f"Bearer {served.keys['agent']}", "X-Request-Id": control},
    ).is_success
    trace_id, span_id = f"{turn.get_span_context().trace_id:032x}", f"{turn.get_span_context().span_id:016x}"

    def arrived(got: list[Span]) -> bool:
        within = [s for s in got if s.name == "POST /v1/recall" and s.parent_id == span_id]
        return len(within) == 2 and any(s.attributes.get("engramdb.request_id") == control for s in got)

    spans = receiver.wait_for(arrived)
    assert {s.trace_id for s in spans if s.parent_id == span_id} == {trace_id}
    assert not any(s.name == "POST /v1/recall" and s.kind == "CLIENT" and s.trace_id == trace_id for s in spans)
    # Control: a request that carries no context starts a trace of its own.
    untraced = next(s for s in spans if s.attributes.get("engramdb.request_id") == control)
    assert untraced.parent_id == "" and untraced.trace_id != trace_id


def test_a_traceparent_is_honoured_and_its_trace_id_is_in_the_log_lines(receiver: Receiver, tmp_path: Path) -> None:
    server = ServeProcess(tmp_path / "home", otel_env(receiver.url, "engramdb-logs"))
    trace_id, parent = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    try:
        with server.client(traceparent=f"00-{trace_id}-{parent}-01") as http:
            assert http.post("/v1/recall", json={"query": "x"}).status_code == 200
        with server.client() as http:
            plain = http.get("/v1/facts")
    finally:
        server.stop()
    spans = receiver.wait_for(lambda got: any(s.trace_id == trace_id for s in got))
    server_span = next(s for s in spans if s.trace_id == trace_id and s.kind == "SERVER")
    assert server_span.parent_id == parent and server_span.service == "engramdb-logs"
    lines = server.log_lines()
    recalled = [line for line in lines if line.get("route") == "/v1/recall"]
    assert [line["traceId"] for line in recalled] == [trace_id] and recalled[0]["spanId"] == server_span.span_id
    listed = next(line for line in lines if line.get("requestId") == plain.headers["x-request-id"])
    assert listed["traceId"] not in (trace_id, None)  # control: the other request has its own trace


def test_with_the_sdk_disabled_nothing_is_traced(receiver: Receiver, served: ServeProcess, tmp_path: Path) -> None:
    server = ServeProcess(tmp_path / "home", otel_env(receiver.url, "engramdb-off", OTEL_SDK_DISABLED="true"))
    trace_id = uuid.uuid4().hex
    try:
        with server.client(traceparent=f"00-{trace_id}-{uuid.uuid4().hex[:16]}-01") as http:
            assert http.post("/v1/recall", json={"query": "x"}).status_code == 200
    finally:
        server.stop()
    assert [line for line in server.log_lines() if line.get("route") == "/v1/recall"]
    assert not [line for line in server.log_lines() if "traceId" in line]
    control = f"traced-{uuid.uuid4().hex[:8]}"
    with served.client(**{"X-Request-Id": control}) as http:  # control: the server with an endpoint exports
        assert http.get("/v1/facts").status_code == 200
    receiver.wait_for(lambda got: any(s.attributes.get("engramdb.request_id") == control for s in got))
    assert not [s for s in receiver.spans if s.service == "engramdb-off" or s.trace_id == trace_id]


def test_an_endpoint_without_the_otel_extra_warns_and_serves(receiver: Receiver, tmp_path: Path) -> None:
    blocked = (
        "import sys; sys.modules['opentelemetry.sdk'] = None; sys.modules['opentelemetry.exporter'] = None; "
        "from engramdb.cli.main import main; sys.argv = ['engram', 'serve']; main()"
    )
    server = ServeProcess(tmp_path / "home", otel_env(receiver.url, "engramdb-bare"), command=["-c", blocked])
    try:
        with server.client() as http:
            assert http.post("/v1/recall", json={"query": "x"}).status_code == 200
    finally:
        server.stop()
    warned = [line for line in server.log_lines() if line["level"] == "WARNING" and "engramdb[otel]" in line["message"]]
    assert len(warned) == 1, server.output[-2000:]
    assert not [s for s in receiver.spans if s.service == "engramdb-bare"]


def test_the_sdk_never_loads_opentelemetry_for_a_host_that_has_not(served: ServeProcess) -> None:
    probe = (
        "import sys; from engramdb import Client; "
        f"c = Client({served.url!r}, {served.keys['agent']!r}); c.recall('x'); "
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert loaded.stdout.strip() == "[]"
    control = probe.replace("from engramdb import Client;", "import opentelemetry.trace; from engramdb import Client;")
    seen = subprocess.run([sys.executable, "-c", control], capture_output=True, text=True, check=True, cwd=ROOT)
    assert "opentelemetry.trace" in seen.stdout  # the probe does see a module a host loaded


@pytest.mark.parametrize(
    ("environ", "traced"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": " "}, False),
    ],
)
def test_the_standard_variables_decide(environ: dict[str, str], traced: bool) -> None:
    assert traces.wanted(environ) is traced
    assert traces.span("engramdb.anything") is traces.OFF  # this test process never traces
