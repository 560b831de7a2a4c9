"""A scripted OpenAI-compatible chat server on loopback: records requests, answers from a script."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A script answers with the reply's text, or with a tool call: {"tool": NAME, "arguments": {...}}.
Script = Callable[[list[dict[str, Any]]], "str | dict[str, Any]"]


def _message(reply: str | dict[str, Any]) -> dict[str, Any]:
    """The assistant message for ``reply``, as OpenAI's chat API answers it."""
    if isinstance(reply, str):
        return {"role": "assistant", "content": reply}
    call = {"id": "call_1", "type": "function",
            "function": {"name": reply["tool"], "arguments": json.dumps(reply["arguments"])}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        if self.path != "/v1/chat/completions":
            self._answer(404, {"error": {"message": f"no route {self.path}"}})
            return
        self.server.chat.requests.append(body)
        reply = self.server.chat.script(body["messages"])
        if body.get("stream"):
            self._stream(body["model"], reply)
            return
        self._answer(200, {
            "id": f"chatcmpl-{len(self.server.chat.requests)}", "object": "chat.completion",
            "model": body["model"], "created": 0,
            "choices": [{"index": 0, "finish_reason": "stop" if isinstance(reply, str) else "tool_calls",
                         "message": _message(reply)}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        })  # fmt: skip

    def _stream(self, model: str, reply: str | dict[str, Any]) -> None:
        """The reply as server-sent events, as OpenAI's streaming API sends it (one chunk)."""
        base = {"id": f"chatcmpl-{len(self.server.chat.requests)}", "object": "chat.completion.chunk",
                "model": model, "created": 0}  # fmt: skip
        delta = _message(reply)
        if "tool_calls" in delta:  # streamed calls carry their index
            delta = {"role": "assistant", "tool_calls": [{"index": 0, **delta["tool_calls"][0]}]}
        finish = "stop" if isinstance(reply, str) else "tool_calls"
        chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                   "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}]  # fmt: skip
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _answer(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    chat: ScriptedChat


class ScriptedChat:
    """``POST /v1/chat/completions`` answered by ``script(messages)``; requests kept in order."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.chat = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
