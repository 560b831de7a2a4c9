"""The MCP package's own refusals (a body over its 4 MB limit, a POST not sent as JSON, a method or an
Accept header it does not take) were plain text or empty, with no field; they answer problem JSON naming
the field, as every other error of the server, and keep their headers (Allow)."""

from __future__ import annotations

import json
from typing import Any, cast

from tests.conftest import LiveServer
from tests.mcp.helpers import INITIALIZE

STREAM = {"Accept": "application/json, text/event-stream"}


def test_the_mcp_layers_refusals_are_problem_json_naming_the_field(server: LiveServer) -> None:
    params = cast(dict[str, Any], INITIALIZE["params"])
    oversized = json.dumps({**INITIALIZE, "params": {**params, "pad": "x" * (5 * 1024 * 1024)}})
    with server.client(server.key()) as http:
        too_large = http.post("/mcp", content=oversized, headers={**STREAM, "content-type": "application/json"})
        assert too_large.status_code == 413, too_large.text
        assert too_large.headers["content-type"] == "application/json"
        problem = too_large.json()
        assert (problem["code"], problem["field"]) == ("payload_too_large", "body"), problem
        assert problem["limitBytes"] == 4194304 and problem["requestId"] == too_large.headers["x-request-id"]

        as_text = http.post("/mcp", content=json.dumps(INITIALIZE), headers={**STREAM, "content-type": "text/plain"})
        assert as_text.status_code == 400, as_text.text
        assert (as_text.json()["code"], as_text.json()["field"]) == ("bad_request", "content-type")

        # A protocol version the package does not know takes its other path: empty 405 and 406 answers.
        newer = {"MCP-Protocol-Version": "2026-07-28"}
        not_taken = http.delete("/mcp", headers={**newer, **STREAM})
        assert not_taken.status_code == 405 and not_taken.headers["allow"] == "POST"  # its headers are kept
        assert not_taken.json()["code"] == "method_not_allowed", not_taken.text
        listing = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        unacceptable = http.post(
            "/mcp", content=listing, headers={**newer, "Accept": "text/plain", "content-type": "application/json"}
        )
        assert unacceptable.status_code == 406 and unacceptable.json()["field"] == "accept", unacceptable.text

        # The controls: the same message as JSON is served, and so is a JSON-RPC error of the package's own.
        served = http.post(
            "/mcp", content=json.dumps(INITIALIZE), headers={**STREAM, "content-type": "application/json"}
        )
        assert served.status_code == 200 and served.json()["result"]["serverInfo"], served.text
        not_rpc = http.post("/mcp", json={"nothing": "here"}, headers=STREAM)
        assert not_rpc.status_code == 400 and not_rpc.json()["jsonrpc"] == "2.0", not_rpc.text
