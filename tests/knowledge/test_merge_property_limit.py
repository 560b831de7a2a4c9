"""A record holds at most 256 properties. Writes merged into one record by mergeBy were each checked
alone, so three of 250 grew it to 751 (and past 15,000 later, each merge then taking seconds)."""

from __future__ import annotations

from tests.conftest import LiveServer


def _wide(start: int, count: int) -> dict[str, object]:
    data = {"key": "k1", **{f"p{i}": i for i in range(start, start + count)}}
    return {"label": "WIDE", "mergeBy": ["key"], "data": data}


def test_a_merge_that_would_pass_the_property_limit_is_refused(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        assert http.post("/v1/records", json=_wide(0, 200)).status_code == 201
        grown = http.post("/v1/records", json=_wide(200, 50))  # the control: 251 properties once merged
        assert grown.status_code == 200, grown.text
        record = grown.json()["records"][0]["id"]
        refused = http.post("/v1/records", json=_wide(250, 10))  # 261 once merged
        assert refused.status_code == 422, refused.text
        assert refused.json()["field"] == "data" and "261 properties" in refused.json()["message"]
        kept = http.get(f"/v1/records/{record}").json()
        assert len(kept["properties"]) == 251  # nothing of the refused merge was written


def test_items_merged_within_one_write_are_held_to_the_limit(server: LiveServer) -> None:
    """Items of one write with the same mergeBy values become one record: each was checked alone."""
    first = {"key": "k2", **{f"a{i}": i for i in range(200)}}
    second = {"key": "k2", **{f"b{i}": i for i in range(200)}}
    with server.client(server.key()) as http:
        refused = http.post("/v1/records", json={"label": "WIDE", "mergeBy": ["key"], "data": [first, second]})
        assert refused.status_code == 422 and "401 properties" in refused.json()["message"], refused.text
        assert http.post("/v1/records/search", json={"count": True}).json()["total"] == 0
        small = [{"key": "k2", "a": 1}, {"key": "k2", "b": 2}]  # the control: merged within the limit
        merged = http.post("/v1/records", json={"label": "WIDE", "mergeBy": ["key"], "data": small})
        assert merged.status_code == 201 and merged.json()["records"][0]["properties"] == {"key": "k2", "a": 1, "b": 2}
