"""No span carries text (issue 36): markers planted in memory text, queries, raw user ids, subject
keys, session ids, record properties, paths and the model's answers never reach an exported span.

A traced ``engram serve`` (a scripted OpenAI-compatible endpoint as its chat model and embedder)
is driven by an agent host through the SDK (writes, a correction, recalls, records, an extraction
job), by an MCP client over HTTP, and by every declared operation's example request with markers
planted in its prose and its path; then every name, attribute (key and value, arrays too), event,
link, status message, resource and scope attribute the receiver decoded is scanned for every
marker. Positive controls: a marker the agent puts in an attribute on purpose, and a request id
the test chooses, are found by the same scan.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

from engramdb.core import auth
from engramdb.models.operations import OPERATIONS
from tests.assist.brain import Brain
from tests.factories import episode_body
from tests.otlp import Receiver, Span, strings
from tests.sdk.chat_server import ScriptedChat
from tests.surfaces.requests import example_request
from tests.surfaces.traced import ServeProcess, otel_env, run_agent

PLANTED = ("text", "query", "user", "subject", "session", "property", "path", "model", "tool")
RUN = uuid.uuid4().hex[:8]
MARKERS = {where: f"qzx{where}{RUN}" for where in PLANTED}
CONTROL, SERVER_CONTROL = f"qzxcontrol{RUN}", f"qzxrequest{RUN}"


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


@pytest.fixture(scope="module")
def brain() -> Brain:
    # The model's answer carries a marker of its own: a completion is text too.
    fact = {"subjectKey": "user", "kind": "location", "text": f"The passport is in the safe {MARKERS['model']}"}
    return Brain(facts=[(MARKERS["text"], {**fact, "confidence": 0.9})])


@pytest.fixture(scope="module")
def served(receiver: Receiver, brain: Brain, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    chat = ScriptedChat(brain)
    model = {
        "ENGRAM_EMBEDDER": f"openai:{chat.url}|scripted-embed",
        "ENGRAM_LLM__BASE_URL": chat.url,
        "ENGRAM_LLM__MODEL": "scripted",
        "ENGRAM_LLM__WORKER_PROCESS": "false",  # the model's calls in the traced server itself
        "ENGRAM_LLM__WORKERS": "1",
    }
    server = ServeProcess(tmp_path_factory.mktemp("no-text") / "home", {**otel_env(receiver.url, "engramdb"), **model})
    yield server
    server.stop()
    chat.close()


def _with_marker(value: Any, marker: str) -> Any:
    """``value`` with ``marker`` added to every piece of prose in it (strings holding a space)."""
    if isinstance(value, dict):
        return {k: _with_marker(v, marker) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_marker(v, marker) for v in value]
    return f"{value} {marker}" if isinstance(value, str) and " " in value else value


def _walk_every_operation(served: ServeProcess) -> None:
    """Every declared operation's example request, as a role that may run it, with markers in its
    prose and its path values; the last one carries the test's own request id."""
    for op in OPERATIONS:
        roles = auth.PERMISSIONS[op.permission].roles if op.permission else frozenset({"agent"})
        role = next(r for r in ("agent", "host", "reviewer", "admin") if r in roles)
        request = example_request(op, path_value=MARKERS["path"])
        if "json" in request:
            request["json"] = _with_marker(request["json"], MARKERS["text"])
        with served.client(role) as http:
            answer = http.request(**request)
        assert answer.status_code < 500, (op.name, answer.status_code, answer.text)
    with served.client("agent") as http:  # a query string: a subject key, a where-filter
        assert http.get("/v1/facts", params={"subjectKey": MARKERS["subject"]}).status_code == 200
        assert http.get("/v1/records", params={"where": f'{{"note": "{MARKERS["property"]}"}}'}).status_code < 500
    with served.client("agent", **{"X-Request-Id": SERVER_CONTROL}) as http:
        bad = http.post("/v1/episodes", json=episode_body(f"turn {MARKERS['text']}", turnIndex=-1))
        assert bad.status_code == 422  # refused: its span names the code, never the text sent


def _mcp(served: ServeProcess) -> None:
    async def main() -> None:
        headers = {"Authorization": f"Bearer {served.keys['agent']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with McpClient(streamable_http_client(f"{served.url}/mcp", http_client=http)) as client:
                said = f"The user sails on weekends {MARKERS['tool']}"
                await client.call_tool("remember_fact", {"subject": "user", "kind": "hobby", "text": said})
                recalled = await client.call_tool("recall", {"query": f"weekends {MARKERS['tool']}"})
                assert not recalled.is_error

    anyio.run(main)


def _leaks(spans: list[Span], markers: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """(marker's place, span, where in it, the text) for every marker found in a span."""
    found = []
    for span in spans:
        for where, text in strings(span):
            found += [(place, span.name, where, text) for place, m in markers.items() if m in text.lower()]
    return found


def test_no_span_carries_text_queries_or_user_ids(receiver: Receiver, served: ServeProcess, brain: Brain) -> None:
    args = {**MARKERS, "control": CONTROL}  # a host key: it names the participant by a raw user id
    agent = run_agent(otel_env(receiver.url, "agent-host"), served.url, served.keys["host"], "broad", **args)
    _mcp(served)
    _walk_every_operation(served)

    def complete(got: list[Span]) -> bool:
        names = {s.name for s in got}
        return {"engramdb.job.extraction", "chat scripted", "embeddings scripted-embed", "POST /mcp"} <= names and any(
            s.attributes.get("engramdb.request_id") == SERVER_CONTROL for s in got
        )

    spans = receiver.wait_for(complete, timeout=60)
    assert len(spans) > 200 and {s.service for s in spans} == {"engramdb", "agent-host"}
    assert _leaks(spans, MARKERS) == []
    # Positive controls: the scan finds a marker the agent set on purpose, and one the server was given.
    assert [(p, n) for p, n, _, _ in _leaks(spans, {"control": CONTROL})] == [("control", "agent.turn")]
    assert {p for p, *_ in _leaks(spans, {"request": SERVER_CONTROL})} == {"request"}
    # And the markers did travel: the model was shown the text, and the fact it answered holds its own.
    assert any(MARKERS["text"] in str(data) for _, data in brain.seen)
    named = {"privacyScope": "private", "sandboxEligible": False, "userId": MARKERS["user"]}
    with served.client("host") as http:
        asked = {"query": "where is the passport", "scope": named, "includePending": True, "limit": 20}
        recalled = http.post("/v1/recall", json=asked).json()["memories"]
    assert any(MARKERS["model"] in memory["text"] for memory in recalled)
    _model_spans_follow_the_conventions(spans, agent["traceId"])


def _model_spans_follow_the_conventions(spans: list[Span], agent_trace: str) -> None:
    chat = next(s for s in spans if s.name == "chat scripted")
    assert chat.kind == "CLIENT" and chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "scripted" and chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.usage.input_tokens"] > 0 and chat.attributes["gen_ai.usage.output_tokens"] > 0
    assert chat.attributes["engramdb.prompt.name"].startswith("extract")
    job = next(s for s in spans if s.span_id == chat.parent_id)
    assert job.name == "engramdb.job.extraction" and job.attributes["engramdb.job.state"] == "done"
    # The query's embedding, asked of the model endpoint inside the agent's trace.
    by_id = {s.span_id: s for s in spans}
    embeds = [s for s in spans if s.name == "embeddings scripted-embed" and s.trace_id == agent_trace]
    assert "engramdb.recall.embed" in {by_id[s.parent_id].name for s in embeds}
    assert all(s.attributes["gen_ai.embeddings.dimension.count"] > 0 for s in embeds)
