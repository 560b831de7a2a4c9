"""A record's properties take at most MAX_RECORD_BYTES once stored, however they got there: written
whole, merged, or grown a PATCH at a time (a review grew one to 90 MB through PATCHes under the body
limit; each PATCH of it then held the tenant's write lock for 8.7 s). Past it: 422 naming the place,
and the record as it was."""

from __future__ import annotations

from typing import Any

import httpx

from engramdb.core.knowledge.properties import MAX_RECORD_BYTES, MAX_STRING
from tests.conftest import LiveServer

LONG = "x" * (MAX_STRING - 100)  # a string well within its own limit


def _long(count: int, start: int = 0) -> dict[str, str]:
    return {f"p{i}": LONG for i in range(start, start + count)}


def _count(http: httpx.Client) -> int:
    return int(http.post("/v1/records/search", json={"count": True}).json()["total"])


def test_a_record_past_the_byte_limit_is_refused_whole(server: LiveServer) -> None:
    over = MAX_RECORD_BYTES // len(LONG) + 1  # properties of LONG that pass the limit
    with server.client(server.key()) as http:
        refused = http.post("/v1/records", json={"label": "NOTE", "data": [{"n": 1}, _long(over)]})
        assert refused.status_code == 422, refused.text
        assert refused.json()["field"] == "data[1]" and f"{MAX_RECORD_BYTES:,}" in refused.json()["message"]
        assert _count(http) == 0  # nothing of the write, the first record neither
        written = http.post("/v1/records", json={"label": "NOTE", "data": [_long(over - 2)]})  # the control
        assert written.status_code == 201, written.text


def test_a_record_is_not_grown_past_it_by_patches(server: LiveServer) -> None:
    half = MAX_RECORD_BYTES // len(LONG) // 2
    with server.client(server.key()) as http:
        [record] = http.post("/v1/records", json={"label": "NOTE", "data": [_long(half)]}).json()["records"]
        grown = http.patch(f"/v1/records/{record['id']}", json={"properties": _long(half - 2, start=half)})
        assert grown.status_code == 200, grown.text  # the control: still under the limit
        before: dict[str, Any] = http.get(f"/v1/records/{record['id']}").json()
        past = http.patch(f"/v1/records/{record['id']}", json={"properties": _long(4, start=2 * half)})
        assert past.status_code == 422 and past.json()["field"] == "properties", past.text
        assert http.get(f"/v1/records/{record['id']}").json() == before  # as it was: same version, same values
        shrunk = http.patch(f"/v1/records/{record['id']}", json={"properties": {"p0": None, "p1": None}})
        assert shrunk.status_code == 200 and shrunk.json()["version"] == before["version"] + 1, shrunk.text
