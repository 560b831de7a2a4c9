"""A scripted OpenAI-compatible chat server on loopback: it records requests and answers from a
script, after a set delay. It stands in for the model in the tests and in ``engram bench assist``.

``script(messages)`` returns the answer's text, or a ``Reply`` to choose its delay (a model that
answers in 50 ms, or one slower than the client's timeout), its HTTP status or its usage, or to
call a tool. A request with ``stream`` is answered as server-sent events, as OpenAI's API does.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_RAW = "\x00raw"  # stands for ``Reply.usage_json`` in the payload until it is written


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    content: str = ""
    delay: float | None = None  # seconds before answering (None: the server's default)
    status: int = 200
    usage: bool = True  # report token usage (as most endpoints do), else none (as some local ones)
    usage_json: str | None = None  # the usage object as this raw JSON text (numbers JSON allows, Python's may not)
    tool: str | None = None  # call this tool (with ``arguments``) instead of answering with text
    arguments: dict[str, Any] | None = None

    def message(self) -> dict[str, Any]:
        """The assistant message, as OpenAI's chat API answers it."""
        if self.tool is None:
            return {"role": "assistant", "content": self.content}
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": self.tool, "arguments": json.dumps(self.arguments or {})},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    @property
    def finish_reason(self) -> str:
        return "stop" if self.tool is None else "tool_calls"


Script = Callable[[list[dict[str, Any]]], "str | Reply"]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints: the client reuses its connections

    def log_message(self, *args: Any) -> None:
        return

    def do_GET(self) -> None:  # a readiness probe
        self._answer(200, {"status": "ok"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        if self.path == "/v1/embeddings":
            self._embeddings(body)
            return
        if self.path != "/v1/chat/completions":
            self._answer(404, {"error": {"message": f"no route {self.path}"}})
            return
        chat = self.server.chat
        with chat.lock:
            chat.requests.append(body if chat.keep else {})
            number = len(chat.requests)
        said = chat.script(body["messages"])
        reply = said if isinstance(said, Reply) else Reply(said)
        time.sleep(chat.delay if reply.delay is None else reply.delay)
        if reply.status != 200:
            self._answer(reply.status, {"error": {"message": reply.content or "scripted failure"}})
            return
        sent = sum(len(str(m.get("content", ""))) for m in body["messages"]) // 4
        received = len(reply.content) // 4
        usage = {"prompt_tokens": sent, "completion_tokens": received, "total_tokens": sent + received}
        if body.get("stream"):
            self._stream(f"chatcmpl-{number}", body["model"], reply, usage if reply.usage else None)
            return
        payload: dict[str, Any] = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "model": body["model"],
            "created": 0,
            "choices": [{"index": 0, "finish_reason": reply.finish_reason, "message": reply.message()}],
        }
        if reply.usage:
            payload["usage"] = usage
        if reply.usage_json is not None:
            payload["usage"] = _RAW
        self._answer(200, payload, raw=reply.usage_json)

    def _embeddings(self, body: dict[str, Any]) -> None:
        """OpenAI's embeddings answer: a deterministic vector per input (``word_vector``)."""
        texts = [body["input"]] if isinstance(body["input"], str) else list(body["input"])
        dims = int(body.get("dimensions") or EMBEDDING_DIMS)
        data = [{"object": "embedding", "index": i, "embedding": word_vector(t, dims)} for i, t in enumerate(texts)]
        tokens = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._answer(200, {"object": "list", "model": body.get("model", "scripted"), "data": data, "usage": usage})

    def _stream(self, answer_id: str, model: str, reply: Reply, usage: dict[str, int] | None) -> None:
        """The reply as server-sent events (one chunk with the message, one with the finish)."""
        base = {"id": answer_id, "object": "chat.completion.chunk", "model": model, "created": 0}
        delta = reply.message()
        if "tool_calls" in delta:  # streamed calls carry their index
            delta = {"role": "assistant", "tool_calls": [{"index": 0, **delta["tool_calls"][0]}]}
        last: dict[str, Any] = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]}
        if usage:
            last["usage"] = usage
        chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}, last]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"
        try:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            return

    def _answer(self, status: int, payload: dict[str, Any], raw: str | None = None) -> None:
        data = json.dumps(payload).replace(json.dumps(_RAW), raw or "null").encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout): nothing to tell it
            return


EMBEDDING_DIMS = 64  # the embeddings route's vector size when the request names none


def word_vector(text: str, dims: int = EMBEDDING_DIMS) -> list[float]:
    """A deterministic embedding: each word (lower case, punctuation stripped) adds one to a slot its
    hash picks; the sum is scaled to unit length. Texts sharing words are near, others orthogonal-ish."""
    vector = [0.0] * dims
    for word in text.lower().split():
        word = word.strip(".,;:!?\"'()[]{}")
        if word:
            vector[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    chat: ScriptedChat


class ScriptedChat:
    """``POST /v1/chat/completions`` answered by ``script(messages)``, requests kept in order;
    ``POST /v1/embeddings`` answered with ``word_vector`` of each input (not recorded)."""

    def __init__(self, script: Script, *, delay: float = 0.0, port: int = 0, keep: bool = True) -> None:
        self.script = script
        self.delay = delay
        self.keep = keep  # keep every request (tests read them); a long benchmark does not
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.chat = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def data_of(messages: list[dict[str, Any]]) -> Any:
    """The JSON document a prompt's data message carries (core/assist/llm/prompts.py's shape)."""
    text = str(messages[1]["content"])
    return json.loads(text.split("\n", 1)[1])


def purpose_of(messages: list[dict[str, Any]]) -> str:
    """Which prompt a request is (extract, judge, reflect, consolidate), read off its first line."""
    first = str(messages[0]["content"]).split("\n", 1)[0]
    for purpose, opening in (
        ("extract", "You extract"),
        ("judge", "You compare"),
        ("reflect", "You write reflec"),
        ("consolidate", "You tidy"),
    ):
        if first.startswith(opening):
            return purpose
    return "chat"


def bench_script(messages: list[dict[str, Any]]) -> str:
    """The benchmark's model: a fact per sentence of a turn ("I like X in Y." -> a likes fact,
    "I work at Z." -> an employer fact), and a coexists verdict on each candidate's first neighbour."""
    purpose, data = purpose_of(messages), data_of(messages)
    if purpose == "extract":
        facts = []
        for turn in data["turns"]:
            for sentence in (s.strip() for s in turn["user"].split(".") if s.strip()):
                if sentence.startswith("I like "):
                    facts.append(
                        {
                            "turn": turn["turn"],
                            "subjectKey": "user",
                            "kind": "likes",
                            "text": f"The user likes {sentence[7:]}.",
                            "confidence": 0.8,
                        }
                    )
                elif sentence.startswith("I work at "):
                    facts.append(
                        {
                            "turn": turn["turn"],
                            "subjectKey": "user",
                            "kind": "employer",
                            "text": f"The user works at {sentence[10:]}.",
                            "confidence": 0.8,
                        }
                    )
        return json.dumps({"facts": facts})
    if purpose == "judge":
        return json.dumps(
            {
                "verdicts": [
                    {
                        "candidate": c["candidate"],
                        "ref": c["neighbours"][0]["ref"],
                        "verdict": "coexists",
                        "confidence": 0.6,
                        "reason": "bench",
                    }
                    for c in data["candidates"]
                    if c["neighbours"]
                ]
            }
        )
    return json.dumps({"facts": [], "verdicts": [], "reflections": [], "groups": []})


def main(argv: list[str]) -> int:
    """``python -m engramdb_bench.scripted_chat --port P --delay S``: the benchmark's model, until killed."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds before each answer")
    args = parser.parse_args(argv)
    chat = ScriptedChat(bench_script, delay=args.delay, port=args.port, keep=False)
    print(chat.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:  # Ctrl-C is how a person stops it: not an error
        return 0
    finally:
        chat.close()
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
