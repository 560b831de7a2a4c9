"""A client for any OpenAI-compatible ``POST /chat/completions`` endpoint (Ollama, vLLM, OpenAI).

``ChatModel.ask`` sends a prompt and the data it is about, asks for JSON of a given shape
(``response_format`` with the JSON Schema, or a JSON object, or the schema in the prompt only),
and returns the parsed answer. An answer that is not JSON of that shape gets a repair turn
(the model is shown what was wrong and asked again), ``repair_attempts`` times; then it is a
``ModelOutputError``. Calls beyond ``max_concurrency`` wait for a slot. Every HTTP request,
failed or not, is handed to the caller's ledger as a ``CallRecord``: tokens (the endpoint's
``usage``, else estimated at four characters a token), cost, latency and outcome.

Failures are ``ModelFailedError``s: retryable for what may pass (a timeout, no connection, 429,
5xx), not for what will not (another 4xx, an answer that is no chat completion).
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import httpx

from engramdb import clock, tls, traces
from engramdb.config import LLMSettings
from engramdb.core.assist.llm.prompts import Prompt
from engramdb.errors import ModelFailedError, ModelNotConfiguredError, ModelOutputError, ModelTimeoutError

log = logging.getLogger(__name__)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)
_TOKEN = re.compile(r"[A-Za-z0-9._:/@+-]{1,128}")  # an id or a name, not text
NOT_CONFIGURED = (
    "no chat model is configured: set ENGRAM_LLM__BASE_URL (e.g. http://127.0.0.1:11434/v1 for a local "
    "Ollama) and ENGRAM_LLM__MODEL (and ENGRAM_LLM__API_KEY for a hosted one); see docs/assist.md"
)


@dataclass(frozen=True)
class CallRecord:
    """One HTTP request to the model, as the usage ledger keeps it."""

    at: str
    purpose: str
    model: str
    prompt_version: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool  # tokens counted from characters: the endpoint reported no usage
    cost: float
    latency_ms: float
    outcome: str  # ok, invalid (a repair turn followed or the call failed), timeout, error
    error: str | None = None


Ledger = Callable[[CallRecord], None]
MAX_TOKENS = 10**9  # far past any model's context: a larger "count" is not one


def _no_ledger(_: CallRecord) -> None:
    return None


def parse_json(content: str) -> Any:
    """The JSON value in a model's answer: the whole text, a fenced block, or the outermost object."""
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return _loads(text)
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            return _loads(text[start : end + 1])
        raise


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:  # "[[[[…" a hundred thousand deep: an unusable answer, not a server failure
        raise ValueError("the answer nests deeper than a JSON document may here") from None


class ChatModel:
    """The configured chat model; thread-safe (one instance serves every worker)."""

    def __init__(self, settings: LLMSettings) -> None:
        if not settings.configured:
            raise ModelNotConfiguredError(NOT_CONFIGURED)
        assert settings.base_url is not None
        self.settings = settings
        self.model = settings.model
        self.url = settings.base_url.rstrip("/") + "/chat/completions"
        key = settings.api_key.get_secret_value() if settings.api_key else None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        slots = settings.max_concurrency
        limits = httpx.Limits(max_connections=slots, max_keepalive_connections=slots)
        self._http = httpx.Client(
            timeout=settings.timeout_seconds, headers=headers, limits=limits, verify=tls.context()
        )
        self._slots = threading.BoundedSemaphore(settings.max_concurrency)
        # Closed with the service that made it, or when collected (its sockets must not leak).
        self._closing = weakref.finalize(self, self._http.close)

    def close(self) -> None:
        self._closing()

    def ask(self, prompt: Prompt, data: Mapping[str, Any], ledger: Ledger = _no_ledger) -> Any:
        """Return the JSON object the model answers ``prompt`` about ``data`` with.

        ``prompt.check`` turns the parsed JSON into the caller's shape or raises ValueError
        saying what is wrong; that text is what a repair turn shows the model.
        """
        messages = prompt.messages(data)
        problem = ""
        for attempt in range(self.settings.repair_attempts + 1):
            content = self._complete(prompt, messages, ledger)
            try:
                return prompt.check(parse_json(content))
            except ValueError as error:
                problem = str(error)[:500]
                log.info("model answer for %s unusable (attempt %d): %s", prompt.name, attempt + 1, problem)
                messages = [
                    *messages,
                    {"role": "assistant", "content": content[:8000]},
                    {"role": "user", "content": prompt.repair(problem)},
                ]
        tries = self.settings.repair_attempts + 1
        raise ModelOutputError(
            f"the model's answer to {prompt.name} was not usable JSON after {tries} attempt(s): {problem}",
            retryable=False,
        )

    def _complete(self, prompt: Prompt, messages: list[dict[str, str]], ledger: Ledger) -> str:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.settings.temperature,
            "max_tokens": self.settings.max_tokens,
            "stream": False,
        }
        if self.settings.structured_output == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": prompt.name, "schema": prompt.schema},
            }
        elif self.settings.structured_output == "json_object":
            body["response_format"] = {"type": "json_object"}
        sent = sum(len(m["content"]) for m in messages)
        with self._slots, traces.span(f"chat {self.model}", self._chat(prompt), kind=traces.Kind.CLIENT) as call:
            started = time.perf_counter()
            try:
                payload = self._post(body)
            except ModelFailedError as error:
                outcome = "timeout" if isinstance(error, ModelTimeoutError) else "error"
                ledger(self._record(prompt, started, sent, None, outcome, error.message))
                raise
            content, usage = _content(payload)
            record = self._record(prompt, started, sent, usage if usage else None, "ok", None, len(content))
            call.set_attributes(_answered(payload, record))
        try:
            parse_json(content)
        except ValueError:
            record = replace(record, outcome="invalid", error="not JSON")
        ledger(record)
        return content

    def _chat(self, prompt: Prompt) -> dict[str, traces.Value] | None:
        """A model call's span attributes (GenAI conventions), never the prompt or its data."""
        if not traces.on():
            return None
        url = httpx.URL(self.url)
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",  # the API's flavour: any OpenAI-compatible endpoint
            "gen_ai.request.model": self.model,
            "gen_ai.request.temperature": self.settings.temperature,
            "gen_ai.request.max_tokens": self.settings.max_tokens,
            "gen_ai.output.type": "json",
            "server.address": url.host,
            "server.port": url.port or (443 if url.scheme == "https" else 80),
            "engramdb.prompt.name": prompt.name,
            "engramdb.prompt.version": prompt.version,
        }

    def _post(self, body: dict[str, Any]) -> Any:
        try:
            response = self._http.post(self.url, json=body, headers=traces.outgoing())  # traceparent
            response.raise_for_status()
            return _loads(response.text)
        except httpx.HTTPStatusError as error:
            status = error.response.status_code
            hint = (
                (
                    " (if the endpoint does not take response_format json_schema, set "
                    "ENGRAM_LLM__STRUCTURED_OUTPUT=json_object or prompt)"
                )
                if status == 400
                else ""
            )
            raise ModelFailedError(
                f"the model endpoint answered HTTP {status}{hint}", retryable=status == 429 or status >= 500
            ) from error
        except httpx.TimeoutException as error:
            raise ModelTimeoutError(f"the model did not answer within {self.settings.timeout_seconds:g} s") from error
        except httpx.UnsupportedProtocol as error:
            raise ModelFailedError("the model endpoint's URL is not http(s)", retryable=False) from error
        except httpx.TransportError as error:
            raise ModelFailedError("the model endpoint could not be reached", retryable=True) from error
        except ValueError as error:  # the body was not JSON
            raise ModelFailedError("the model endpoint's answer is not JSON", retryable=False) from error

    def _record(
        self,
        prompt: Prompt,
        started: float,
        sent_chars: int,
        usage: Mapping[str, Any] | None,
        outcome: str,
        error: str | None,
        received_chars: int = 0,
    ) -> CallRecord:
        prompt_counted = _count(usage, "prompt_tokens") if usage else None
        completion_counted = _count(usage, "completion_tokens") if usage else None
        estimated = prompt_counted is None or completion_counted is None
        prompt_tokens = math.ceil(sent_chars / 4) if prompt_counted is None else prompt_counted
        completion_tokens = math.ceil(received_chars / 4) if completion_counted is None else completion_counted
        cost = (
            prompt_tokens * self.settings.prompt_cost_per_million
            + completion_tokens * self.settings.completion_cost_per_million
        ) / 1e6
        return CallRecord(
            at=clock.now_text(),
            purpose=prompt.name,
            model=self.model,
            prompt_version=prompt.version,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            estimated=estimated,
            cost=cost,
            latency_ms=(time.perf_counter() - started) * 1000,
            outcome=outcome,
            error=error,
        )


def _answered(payload: Any, record: CallRecord) -> dict[str, traces.Value]:
    """What a model's answer adds to its span: tokens, the answering model, why it stopped; ids
    and names the endpoint sent only when they are short plain strings."""
    found: dict[str, traces.Value] = {
        "gen_ai.usage.input_tokens": record.prompt_tokens,
        "gen_ai.usage.output_tokens": record.completion_tokens,
        "engramdb.usage.estimated": record.estimated,  # counted from characters: the endpoint said nothing
    }
    choices = payload.get("choices") if isinstance(payload, dict) else None
    reasons = [c.get("finish_reason") for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []
    named = [r for r in reasons if isinstance(r, str) and _TOKEN.fullmatch(r)]
    if named and len(named) == len(reasons):
        found["gen_ai.response.finish_reasons"] = named
    for key, name in (("model", "gen_ai.response.model"), ("id", "gen_ai.response.id")):
        value = payload.get(key) if isinstance(payload, dict) else None
        if isinstance(value, str) and _TOKEN.fullmatch(value):
            found[name] = value
    return found


def _content(payload: Any) -> tuple[str, Mapping[str, Any]]:
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as error:
        raise ModelFailedError("the model endpoint's answer is not a chat completion", retryable=False) from error
    if not isinstance(content, str):
        raise ModelFailedError("the model's answer has no text content", retryable=False)
    usage = payload.get("usage") if isinstance(payload, dict) else None
    return content, usage if isinstance(usage, dict) and usage.get("prompt_tokens") is not None else {}


def _count(usage: Mapping[str, Any], name: str) -> int | None:
    """A token count the endpoint reported, if it is one: a number from 0 to ``MAX_TOKENS`` (1e400,
    10^26, NaN or a negative number is no count, and the ledger's columns could not hold it)."""
    value = usage.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_TOKENS:
        return None
    return int(value)
