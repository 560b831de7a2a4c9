"""A model that answers badly, slowly or not at all: repaired, or failed cleanly with nothing
written and every call in the ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.errors import ModelFailedError, ModelOutputError, ModelTimeoutError
from engramdb.models.assist import UsageQuery
from engramdb.models.lifecycle import ReviewQuery
from engramdb.models.memories import FactQuery
from engramdb.storage.port import Store
from tests.assist.brain import Brain
from tests.assist.conftest import llm_settings
from tests.assist.helpers import ADMIN, extract, fact, item
from tests.sdk.chat_server import Reply, ScriptedChat

GOOD = json.dumps(
    {"facts": [{"turn": 0, "subjectKey": "user", "kind": "pet", "text": "The user has a cat.", "confidence": 0.9}]}
)


def _nothing_written(service: MemoryService, agent: Caller) -> bool:
    return (
        service.reads.list_facts(agent, FactQuery(include_history=True)).facts == []
        and service.review.review_queue(ADMIN, ReviewQuery()).items == []
    )


def test_malformed_json_is_repaired_by_a_second_turn(
    service: MemoryService, agent: Caller, brain: Brain, chat: ScriptedChat
) -> None:
    brain.raw = ["Sure! Here are the facts: {facts: [turn 0, 'cat']", f"```json\n{GOOD}\n```"]
    result = extract(service, agent, "I have a cat.")
    assert item(result, "cat").action == "parked"
    assert result.usage.calls == 2
    repair = chat.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "Sure! Here are the facts: {facts: [turn 0, 'cat']"}
    assert repair[-1]["role"] == "user" and "could not be used" in repair[-1]["content"]
    calls = service.assist.assist_usage(ADMIN, UsageQuery()).recent
    assert [c.outcome for c in reversed(calls)] == ["invalid", "ok"]


def test_a_wrong_shape_is_repaired_too(service: MemoryService, agent: Caller, brain: Brain) -> None:
    brain.raw = ['{"facts": "the user has a cat"}', GOOD]
    assert item(extract(service, agent, "I have a cat."), "cat").action == "parked"


def test_malformed_json_that_stays_malformed_fails_cleanly(service: MemoryService, agent: Caller, brain: Brain) -> None:
    brain.raw = ["not json at all", "still not json {"]
    with pytest.raises(ModelOutputError) as failed:
        extract(service, agent, "I have a cat.")
    assert failed.value.http_status == 502 and failed.value.code == "model_output_invalid"
    assert "2 attempt(s)" in failed.value.message and not failed.value.retryable
    assert _nothing_written(service, agent)
    usage = service.assist.assist_usage(ADMIN, UsageQuery())
    assert (usage.total.calls, usage.total.failed) == (2, 2)  # both calls accounted
    # Positive control: the same request with a usable answer writes its fact.
    brain.facts = [fact("user", "pet", "The user has a cat.")]
    assert item(extract(service, agent, "The user has a cat."), "cat").action == "parked"


def test_a_timeout_fails_cleanly_and_is_accounted(store: Store, tmp_path: Path, agent: Caller) -> None:
    brain = Brain(raw=[Reply(GOOD, delay=2.0)], facts=[fact("user", "pet", "The user has a cat.")])
    chat = ScriptedChat(brain)
    try:
        store.tenant("t1", create=True)
        service = MemoryService(store, HashingEmbedder(), llm_settings(tmp_path, chat.url, timeout_seconds=0.3))
        with pytest.raises(ModelTimeoutError) as failed:
            extract(service, agent, "The user has a cat.")
        assert (failed.value.http_status, failed.value.code, failed.value.retryable) == (504, "model_timeout", True)
        assert _nothing_written(service, agent)
        calls = service.assist.assist_usage(ADMIN, UsageQuery()).recent
        assert [(c.outcome, c.purpose) for c in calls] == [("timeout", "extract")]
        # The next call, answered in time, works (the client is not left broken).
        assert item(extract(service, agent, "The user has a cat."), "cat").action == "parked"
    finally:
        chat.close()


def test_an_endpoint_error_says_whether_a_retry_may_help(service: MemoryService, agent: Caller, brain: Brain) -> None:
    brain.raw = [Reply("overloaded", status=503), Reply("bad request", status=400)]
    with pytest.raises(ModelFailedError) as busy:
        extract(service, agent, "I have a cat.")
    assert (busy.value.code, busy.value.retryable) == ("model_failed", True) and "503" in busy.value.message
    with pytest.raises(ModelFailedError) as refused:
        extract(service, agent, "I have a cat.")
    assert not refused.value.retryable and "STRUCTURED_OUTPUT" in refused.value.message
    assert _nothing_written(service, agent)


def test_no_usage_reported_is_estimated(service: MemoryService, agent: Caller, brain: Brain) -> None:
    brain.raw = [Reply(GOOD, usage=False)]
    extract(service, agent, "I have a cat.")
    [call] = service.assist.assist_usage(ADMIN, UsageQuery()).recent
    assert call.estimated and call.prompt_tokens > 100 and call.completion_tokens > 10


def test_an_unreachable_endpoint_is_a_retryable_failure(store: Store, tmp_path: Path, agent: Caller) -> None:
    store.tenant("t1", create=True)
    service = MemoryService(store, HashingEmbedder(), llm_settings(tmp_path, "http://127.0.0.1:9/v1"))
    with pytest.raises(ModelFailedError) as failed:
        extract(service, agent, "I have a cat.")
    assert failed.value.retryable and "could not be reached" in failed.value.message


def test_an_answer_nested_past_any_parser_fails_cleanly(service: MemoryService, agent: Caller, brain: Brain) -> None:
    # Issue 30: an answer of 100,000 "[" answered 500 (RecursionError) instead of the model's failure.
    brain.raw = ["[" * 100_000, "[" * 100_000]
    with pytest.raises(ModelOutputError) as failed:
        extract(service, agent, "I have a cat.")
    assert failed.value.http_status == 502 and "nests deeper" in failed.value.message
    assert _nothing_written(service, agent)
    brain.facts = [fact("user", "pet", "The user has a cat.")]  # control: the client still works
    assert item(extract(service, agent, "The user has a cat."), "cat").action == "parked"


def test_usage_numbers_no_model_could_spend_are_estimated(service: MemoryService, agent: Caller, brain: Brain) -> None:
    # Issue 30: usage.prompt_tokens of 1e400 or 10^26 answered 500 (and left a queued job running).
    huge = '{"prompt_tokens": 1e400, "completion_tokens": 100000000000000000000000000, "total_tokens": -1}'
    brain.raw = [Reply(GOOD, usage_json=huge), Reply(GOOD)]
    assert item(extract(service, agent, "I have a cat."), "cat").action == "parked"
    assert item(extract(service, agent, "I have a cat too."), "cat").action == "duplicate"
    control, absurd = service.assist.assist_usage(ADMIN, UsageQuery()).recent  # newest first
    assert absurd.estimated and 0 < absurd.prompt_tokens < 10**6 and 0 < absurd.completion_tokens < 10**6
    assert not control.estimated  # control: counts the endpoint reported are used as they are


def test_a_models_nul_is_taken_out_and_a_lone_surrogate_skipped(
    service: MemoryService, agent: Caller, brain: Brain
) -> None:
    # Issue 30: a model fact with NUL in subjectKey or kind answered 500 on PostgreSQL.
    nul = {"turn": 0, "subjectKey": "us\u0000er", "kind": "p\u0000et", "text": "The user has a cat.", "confidence": 0.9}
    lone = {"turn": 0, "subjectKey": "user", "kind": "food", "text": "The user likes \ud800 tea.", "confidence": 0.9}
    brain.raw = [json.dumps({"facts": [nul, lone]})]  # JSON escapes them: \\u0000, \\ud800
    result = extract(service, agent, "I have a cat and I like tea.")
    cat = item(result, "cat")
    assert (cat.action, cat.subject_key, cat.kind) == ("parked", "user", "pet")
    [skipped] = [i for i in result.items if i.action == "skipped"]
    assert "lone surrogate" in skipped.reason


def _review():  # type: ignore[no-untyped-def]
    from engramdb.models.lifecycle import ReviewQuery

    return ReviewQuery()
