"""One record write holds at most MAX_VALUES typed values (a list's items count one each): each is a
row inserted under the tenant's write lock, and 1,000 records of 1,000-item lists held it for a minute.
The limit is lowered here (the server runs in this process) so that the write past it stays small."""

from __future__ import annotations

import pytest

from engramdb.core.knowledge import properties, writing
from tests.conftest import LiveServer


def _notes(records: int, items: int) -> dict[str, object]:
    return {"label": "NOTE", "data": [{"n": i, "tags": [f"t{j}" for j in range(items)]} for i in range(records)]}


def test_a_write_past_the_value_limit_is_refused_whole(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writing, "MAX_VALUES", 50)
    with server.client(server.key()) as http:
        refused = http.post("/v1/records", json=_notes(5, 10))  # 5 x (1 + 10) = 55 values
        assert refused.status_code == 422, refused.text
        assert refused.json()["field"] == "data" and "55 values" in refused.json()["message"]
        assert http.post("/v1/records/search", json={"count": True}).json()["total"] == 0  # nothing written
        written = http.post("/v1/records", json=_notes(4, 10))  # the control: 44 values
        assert written.status_code == 201 and len(written.json()["records"]) == 4, written.text


def test_a_patch_and_a_relationship_are_held_to_the_limits(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writing, "MAX_VALUES", 50)
    with server.client(server.key()) as http:
        records = http.post("/v1/records", json=_notes(2, 1)).json()["records"]
        one, two = records[0]["id"], records[1]["id"]
        patched = http.patch(f"/v1/records/{one}", json={"properties": {"tags": [f"t{j}" for j in range(60)]}})
        assert patched.status_code == 422 and patched.json()["field"] == "properties", patched.text
        assert http.patch(f"/v1/records/{one}", json={"properties": {"tags": ["a", "b"]}}).status_code == 200

        link = {"source": {"kind": "RECORD", "id": one}, "target": {"kind": "RECORD", "id": two}, "type": "NEXT"}
        many = {f"p{i}": i for i in range(300)}  # past the 256 properties a record may hold
        refused = http.post("/v1/relationships", json={**link, "properties": many})
        assert refused.status_code == 422 and refused.json()["field"] == "properties", refused.text
        listed = {"p": [f"v{j}" for j in range(60)]}  # past the (lowered) value limit
        assert http.post("/v1/relationships", json={**link, "properties": listed}).status_code == 422
        assert http.post("/v1/relationships", json={**link, "properties": {"p": 1}}).status_code in (200, 201)


def test_the_limits_keep_one_write_short(server: LiveServer) -> None:
    """The limits themselves (1,000 records, 10,000 values: ~0.5 s under the write lock here; 10,000
    records held it for 12-14 s while another key's write waited): at each, written; one past, refused."""
    assert (properties.MAX_RECORDS, properties.MAX_VALUES) == (1_000, 10_000)
    with server.client(server.key()) as http:
        at_records = http.post("/v1/records", json=_notes(properties.MAX_RECORDS, 0))  # a value each (n)
        assert at_records.status_code == 201 and len(at_records.json()["records"]) == properties.MAX_RECORDS
        past = http.post("/v1/records", json=_notes(properties.MAX_RECORDS + 1, 0))
        assert past.status_code == 422 and past.json()["field"] == "data" and "1001 records" in past.text, past.text
        at_values = http.post("/v1/records", json=_notes(10, 999))  # 10 x (1 + 999) = 10,000 values
        assert at_values.status_code == 201, at_values.text
        over = http.post("/v1/records", json=_notes(10, 1_000))  # 10,010 values
        assert over.status_code == 422 and "10010 values" in over.json()["message"], over.text
