"""``GET /mcp`` opens no event stream: the endpoint is stateless, so the stream would carry only
pings, for ever, and each held a place among the server's requests in flight (32 shut out other
keys). It is answered 405 at once, as the MCP specification allows; POST is served as ever."""

from __future__ import annotations

from tests.conftest import LiveServer
from tests.mcp.helpers import INITIALIZE

STREAM = {"Accept": "application/json, text/event-stream"}


def test_a_get_is_answered_405_at_once_and_holds_no_place(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        http.timeout = 5.0  # a stream opened instead would read pings past it
        for _ in range(40):  # more than ENGRAM_MAX_IN_FLIGHT (32): each ended, none holds a place
            answer = http.get("/mcp", headers={"Accept": "text/event-stream"})
            assert answer.status_code == 405 and answer.json()["code"] == "method_not_allowed"
            assert "POST" in answer.headers["allow"]
        assert http.post("/mcp", json=INITIALIZE, headers=STREAM).status_code == 200  # the control: POST served
        assert http.post("/v1/recall", json={"query": "anything"}).status_code == 200  # and another route
    with server.client(None) as anonymous:  # a key is still checked first
        assert anonymous.get("/mcp", headers={"Accept": "text/event-stream"}).status_code == 401
