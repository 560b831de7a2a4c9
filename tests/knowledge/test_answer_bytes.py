"""One answer of the knowledge plane carries at most ANSWER_BYTES of properties: record searches, a
record's history and exports stop before the record that would pass it (48 records of 3.8 MB made
one search answer 184 MB, while another tenant's recalls waited: a review). Every page says more
may follow, and paging on reaches every record exactly once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.knowledge.paging import ANSWER_BYTES
from engramdb.core.knowledge.properties import MAX_RELATIONSHIP_BYTES, MAX_STRING
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.knowledge import DeleteRequest, RecordSearch, RecordSearchResult, RecordWrite
from engramdb.storage.knowledge import reads
from engramdb.storage.knowledge.port import RecordRow
from engramdb.storage.knowledge.rows import record_row
from tests.conftest import LiveServer
from tests.factories import scope_fields

MINE = scope_fields()

LONG = "7" * (MAX_STRING - 100)  # digits: a record text the worker would embed has a letter
BIG = 55  # properties of LONG in one big record: 875 KB, so four fit in ANSWER_BYTES and five do not


def _big(n: int) -> dict[str, Any]:
    return {"n": n, **{f"p{i}": LONG for i in range(BIG)}}


def _search(http: httpx.Client, **body: Any) -> dict[str, Any]:
    answer = http.post("/v1/records/search", json=body)
    assert answer.status_code == 200, answer.text
    assert len(answer.content) < ANSWER_BYTES + 100_000  # the page's bytes are its properties and a little more
    return dict(answer.json())


def test_a_search_page_stops_at_the_answer_limit_and_pages_on(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        assert http.post("/v1/records", json={"label": "DOC", "data": [_big(n) for n in range(6)]}).is_success
        assert http.post("/v1/records", json={"label": "NOTE", "data": [{"n": n} for n in range(6)]}).is_success
        order = {"n": "asc"}
        first = _search(http, labels=["DOC"], orderBy=order, limit=10)
        assert [r["properties"]["n"] for r in first["records"]] == [0, 1, 2, 3]
        assert first["truncated"] is True and first.get("total") is None  # more follow: no total yet
        rest = _search(http, labels=["DOC"], orderBy=order, limit=10, skip=4)
        assert [r["properties"]["n"] for r in rest["records"]] == [4, 5]
        assert rest["truncated"] is False and rest["total"] == 6
        counted = _search(http, labels=["DOC"], orderBy=order, limit=10, count=True)
        assert counted["truncated"] is True and counted["total"] == 6  # a count asked for is still the count
        small = _search(http, labels=["NOTE"], orderBy=order, limit=10)  # the control: small records fill it
        assert len(small["records"]) == 6 and small["truncated"] is False and small["total"] == 6


def test_a_page_holds_one_record_however_large(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        assert http.post("/v1/records", json={"label": "DOC", "data": [_big(0), _big(1)]}).is_success
        page = _search(http, labels=["DOC"], orderBy={"n": "asc"}, limit=1)
        assert [r["properties"]["n"] for r in page["records"]] == [0] and page["truncated"] is False


def test_a_history_page_stops_at_the_answer_limit(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        [big] = http.post("/v1/records", json={"label": "DOC", "data": [_big(0)]}).json()["records"]
        [small] = http.post("/v1/records", json={"label": "NOTE", "data": [{"n": 0}]}).json()["records"]
        for tick in range(1, 6):  # six versions of each
            for record in (big, small):
                assert http.patch(f"/v1/records/{record['id']}", json={"properties": {"n": tick}}).is_success
        first = http.get(f"/v1/records/{big['id']}/history").json()
        assert [v["properties"]["n"] for v in first["versions"]] == [0, 1, 2, 3]
        rest = http.get(f"/v1/records/{big['id']}/history", params={"cursor": first["nextCursor"]}).json()
        assert [v["properties"]["n"] for v in rest["versions"]] == [4, 5] and rest.get("nextCursor") is None
        whole = http.get(f"/v1/records/{small['id']}/history").json()  # the control: one page
        assert [v["properties"]["n"] for v in whole["versions"]] == [0, 1, 2, 3, 4, 5]
        assert whole.get("nextCursor") is None


def test_an_export_leaves_out_a_hop_past_the_answer_limit(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        docs = [{**_big(n), "part": {"m": n, "body": [LONG] * (BIG - 1)}} for n in range(3)]
        assert http.post("/v1/records", json={"label": "DOC", "data": docs}).is_success
        fits = http.post("/v1/records/export", json={"labels": ["DOC"], "limit": 2, "depth": 1})
        assert fits.status_code == 200, fits.text  # the control: two documents and their parts fit
        assert len(fits.json()["records"]) == 4 and len(fits.json()["relationships"]) == 2
        assert fits.json()["truncated"] is False
        past = http.post("/v1/records/export", json={"labels": ["DOC"], "limit": 3, "depth": 1})
        assert past.status_code == 200 and len(past.content) < ANSWER_BYTES + 100_000, past.text
        assert sorted(r["label"] for r in past.json()["records"]) == ["DOC"] * 3
        assert past.json()["relationships"] == [] and past.json()["truncated"] is True


def test_a_semantic_search_page_stops_at_the_answer_limit(service: MemoryService, operator: Caller) -> None:
    data = [{**_big(n), "title": f"the garden needs watering, note {n}"} for n in range(6)]
    service.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "DOC", "data": data, "scope": MINE})
    )
    drain(service.shared.store.tenant("t1"), HashingEmbedder())

    def search(skip: int) -> RecordSearchResult:
        body = {"query": "the garden needs watering", "limit": 10, "skip": skip, "scope": MINE}
        return service.record_reads.search_records(operator, RecordSearch.model_validate(body))

    first, rest = search(0), search(4)
    assert len(first.records) == 4 and first.truncated and first.total is None
    assert len(rest.records) == 2 and not rest.truncated and rest.total == 6
    seen = {r.properties["n"] for r in [*first.records, *rest.records]}
    assert seen == set(range(6))  # every record once, across the two pages


NOTE = "8" * 15_000
WIDE = {f"q{i}": NOTE for i in range(4)}  # 60 KB of properties: 67 of them pass ANSWER_BYTES


def _linked(http: httpx.Client, count: int, properties: dict[str, Any]) -> tuple[str, list[str]]:
    """A HUB record linked to ``count`` small records, each link carrying ``properties``."""
    data = [{"n": n} for n in range(count + 1)]
    ids = [r["id"] for r in http.post("/v1/records", json={"label": "HUB", "data": data}).json()["records"]]
    for target in ids[1:]:
        link = {"source": ids[0], "target": target, "type": "POINTS_AT", "properties": properties}
        assert http.post("/v1/relationships", json=link).status_code in (200, 201)
    return ids[0], ids[1:]


def test_a_relationship_takes_at_most_its_byte_limit(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        a, b = (r["id"] for r in http.post("/v1/records", json={"label": "HUB", "data": [{}, {}]}).json()["records"])
        past = {f"q{i}": NOTE for i in range(MAX_RELATIONSHIP_BYTES // len(NOTE) + 1)}
        refused = http.post("/v1/relationships", json={"source": a, "target": b, "type": "T", "properties": past})
        assert refused.status_code == 422 and refused.json()["field"] == "properties", refused.text
        assert http.get("/v1/relationships", params={"id": a}).json()["relationships"] == []
        taken = http.post("/v1/relationships", json={"source": a, "target": b, "type": "T", "properties": WIDE})
        assert taken.status_code in (200, 201), taken.text  # the control: within the limit


def test_a_page_of_relationships_stops_at_the_answer_limit(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        hub, targets = _linked(http, 70, WIDE)
        listed: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            params: dict[str, str | int] = {"id": hub, "limit": 100, **({"cursor": cursor} if cursor else {})}
            answer = http.get("/v1/relationships", params=params)
            assert answer.status_code == 200 and len(answer.content) < ANSWER_BYTES + 100_000
            listed += [r["target"]["id"] for r in answer.json()["relationships"]]
            pages, cursor = pages + 1, answer.json().get("nextCursor")
            if cursor is None:
                break
        assert pages == 2 and sorted(listed) == sorted(targets)  # each once, over two pages
        small, _ = _linked(http, 70, {"w": 1})  # the control: small links fill one page
        one = http.get("/v1/relationships", params={"id": small, "limit": 100}).json()
        assert len(one["relationships"]) == 70 and one.get("nextCursor") is None


def test_an_export_counts_its_relationships_bytes(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        _linked(http, 70, WIDE)
        past = http.post("/v1/records/export", json={"labels": ["HUB"], "where": {"n": 0}, "depth": 1}).json()
        assert past["truncated"] is True and past["relationships"] == [] and len(past["records"]) == 1
        fits = http.post("/v1/records/export", json={"labels": ["HUB"], "where": {"n": 1}, "depth": 1}).json()
        assert fits["truncated"] is False and len(fits["relationships"]) == 1  # the control: a target's one link


def test_a_delete_reads_ids_not_the_matches_properties(
    service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = [_big(n) for n in range(6)]
    service.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "DOC", "data": data, "scope": MINE})
    )
    loaded: list[int] = []

    def counted(row: Sequence[Any]) -> RecordRow:  # every record the knowledge plane's reads load
        loaded.append(len(row[4]))
        return record_row(row)

    monkeypatch.setattr(reads, "record_row", counted)
    search = service.record_reads.search_records(
        operator, RecordSearch.model_validate({"labels": ["DOC"], "scope": MINE})
    )
    assert len(search.records) == 4 and len(loaded) == 4  # the control: a search loads what it answers
    loaded.clear()
    body = {"labels": ["DOC"], "scope": MINE}
    dry = service.record_deletes.delete_records(operator, DeleteRequest.model_validate({**body, "dryRun": True}))
    done = service.record_deletes.delete_records(operator, DeleteRequest.model_validate(body))
    assert len(dry.records) == len(done.records) == 6 and loaded == []  # each row read alone, in the delete
