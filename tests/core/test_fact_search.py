"""Structured fact search (``search_facts``, ``list_subjects``) on both backends: the prefix and the
conditions choose the facts before anything is ranked, every chosen fact is ranked (pages are
exact, a fact is found by its words the moment it is written), and open scope fields cover every
scope's value of them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engramdb.contract.writes import FactWrite
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.errors import InvalidInputError
from engramdb.jobs.embedding import drain
from engramdb.models.fact_search import FactSearch, SubjectQuery
from engramdb.models.lifecycle import RetractRequest
from tests.factories import fact_body, participant, scope_fields
from tests.sqlite_steps import vm_steps

SCOPE = scope_fields()


def _put(service: MemoryService, caller: Caller, subject: str, kind: str, value: Any, scope: Any = None) -> str:
    text = value if isinstance(value, str) else json.dumps({"v": value})
    body = fact_body(text, scope=scope or SCOPE, subject=subject, kind=kind)
    return service.writes.write_fact(caller, FactWrite.model_validate(body)).id


def _search(service: MemoryService, caller: Caller, **body: Any) -> tuple[list[tuple[str, float | None]], int | None]:
    page = service.fact_search.search_facts(caller, FactSearch.model_validate({"scope": SCOPE, **body}))
    return [(str(f.fact.event["kind"]), f.score) for f in page.facts], page.total


def _kinds(service: MemoryService, caller: Caller, **body: Any) -> list[str]:
    return [kind for kind, _ in _search(service, caller, **body)[0]]


def test_newest_first_under_the_prefix_current_facts_only(service: MemoryService, operator: Caller) -> None:
    for kind in ("a", "b", "c"):
        _put(service, operator, "ns:p/", kind, {"n": 1})
    _put(service, operator, "ns:p/q/", "deeper", {"n": 1})
    _put(service, operator, "ns:pq/", "beside", {"n": 1})  # shares the text prefix "ns:p", not "ns:p/"
    _put(service, operator, "ns:p/", "b", {"n": 2})  # a new version of b: the newest now
    gone = _put(service, operator, "ns:p/", "c", {"n": 3})
    service.writes.retract_fact(operator, gone, RetractRequest.model_validate({"reason": "deleted", "scope": SCOPE}))
    assert _search(service, operator, subjectPrefix="ns:p/") == ([("b", None), ("deeper", None), ("a", None)], 3)
    assert _kinds(service, operator, subjectPrefix="ns:p/", offset=1, limit=1) == ["deeper"]
    assert _kinds(service, operator, subjectPrefix="ns:p") == ["b", "beside", "deeper", "a"]  # control: plain prefix


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"path": ["v", "color"], "op": "eq", "value": "red"}, {"red1", "red2"}),
        ({"path": ["v", "color"], "op": "ne", "value": "red"}, {"green", "none", "nested", "text"}),
        ({"path": ["v", "n"], "op": "gt", "value": 2}, {"red2", "green"}),
        ({"path": ["v", "n"], "op": "lte", "value": 2.0}, {"red1"}),
        ({"path": ["v", "n"], "op": "eq", "value": 3.0}, {"red2"}),
        ({"path": ["v", "color"], "op": "eq", "value": None}, {"none", "nested"}),
        ({"path": ["v", "tags"], "op": "eq", "value": ["x", "y"]}, {"nested"}),
        ({"path": ["v", "tags", 1], "op": "eq", "value": "y"}, {"nested"}),
        ({"path": ["v", "tags"], "op": "length", "value": 2}, {"nested"}),
        ({"path": ["v", "meta"], "op": "eq", "value": {"a": 1, "b": [True]}}, {"nested"}),
        ({"path": ["v", "meta", "b", 0], "op": "eq", "value": True}, {"nested"}),
        ({"path": ["v", "meta"], "op": "type", "value": "object"}, {"nested"}),
        ({"path": ["v", "n"], "op": "type", "value": "number"}, {"red1", "red2", "green"}),
        ({"path": ["v", "n"], "op": "gt", "value": -(10**30)}, {"red1", "red2", "green"}),  # past 64 bits
        ({"path": ["v", "odd.key"], "op": "eq", "value": "é"}, {"none"}),
    ],
)
def test_conditions_on_the_json_a_fact_holds(
    service: MemoryService, operator: Caller, condition: dict[str, Any], expected: set[str]
) -> None:
    _put(service, operator, "ns:w/", "red1", {"color": "red", "n": 1})
    _put(service, operator, "ns:w/", "red2", {"color": "red", "n": 3})
    _put(service, operator, "ns:w/", "green", {"color": "green", "n": 7.5})
    _put(service, operator, "ns:w/", "none", {"odd.key": "é"})
    _put(service, operator, "ns:w/", "nested", {"tags": ["x", "y"], "meta": {"b": [True], "a": 1}, "color": None})
    _put(service, operator, "ns:w/", "text", {"n": "4", "color": "blue"})  # a numeric string is no number
    _put(service, operator, "ns:w/", "plain", "not JSON: never meets a condition")
    assert set(_kinds(service, operator, subjectPrefix="ns:w/", where=[condition], limit=100)) == expected
    assert len(_kinds(service, operator, subjectPrefix="ns:w/", limit=100)) == 7  # control: no condition, all


def test_a_condition_is_refused_where_it_cannot_mean_anything() -> None:
    for condition in (
        {"path": ["v", "n"], "op": "gt", "value": "3"},
        {"path": ["v", 'say "hi"'], "op": "eq", "value": 1},
        {"path": ["v"], "op": "type", "value": "integer"},
        {"path": ["v"], "op": "length", "value": True},
    ):
        with pytest.raises(InvalidInputError):
            FactSearch.model_validate({"subjectPrefix": "ns:", "where": [condition]})
    FactSearch.model_validate({"subjectPrefix": "ns:", "where": [{"path": ["v"], "op": "eq", "value": None}]})


def test_conditions_apply_before_the_ranking(service: MemoryService, operator: Caller) -> None:
    for i in range(30):
        _put(service, operator, "ns:food/", f"pie{i}", {"text": "apple pie", "color": "green"})
    _put(service, operator, "ns:food/", "bread", {"text": "banana bread", "color": "red"})
    red = [{"path": ["v", "color"], "op": "eq", "value": "red"}]
    assert _kinds(service, operator, subjectPrefix="ns:food/", query="apple pie", where=red, limit=5) == ["bread"]
    assert _kinds(service, operator, subjectPrefix="ns:food/", query="apple pie", limit=1) != ["bread"]  # control


def test_every_fact_is_ranked_and_pages_split_one_ranking(service: MemoryService, operator: Caller) -> None:
    words = ["apple", "banana", "cherry", "plum", "pear"]
    for i in range(60):
        _put(service, operator, "ns:r/", f"k{i:02d}", {"text": f"{words[i % 5]} {words[(i * 3) % 5]} number {i}"})
    drain(service.shared.store.tenant("t1"), service.shared.embedder)
    _put(service, operator, "ns:r/", "fresh", {"text": "quince"})  # its vector not made yet
    whole, total = _search(service, operator, subjectPrefix="ns:r/", query="apple cherry", limit=1000)
    assert total == 61 and len(whole) == 61 and len({k for k, _ in whole}) == 61  # every fact, once
    scores = [s for _, s in whole]
    assert all(s is not None and 0 <= s <= 1 for s in scores) and scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    pages = [
        _search(service, operator, subjectPrefix="ns:r/", query="apple cherry", limit=7, offset=o)
        for o in range(0, 63, 7)
    ]
    assert [hit for page, _ in pages for hit in page] == whole  # each page is the ranking's slice
    assert _kinds(service, operator, subjectPrefix="ns:r/", query="quince")[0] == "fresh"  # by its words at once


def test_open_scope_fields_cover_every_participant(service: MemoryService, operator: Caller) -> None:
    bob = scope_fields(participantScopeHash=participant("bob"))
    other_agent = scope_fields(agentId="reviewer-bot")
    _put(service, operator, "ns:m/alice/", "a", {"text": "tea"})
    _put(service, operator, "ns:m/bob/", "b", {"text": "tea"}, scope=bob)
    _put(service, operator, "ns:m/carol/", "c", {"text": "tea"}, scope=other_agent)
    open_scope = {k: v for k, v in SCOPE.items() if k != "participantScopeHash"}
    body = FactSearch.model_validate({"subjectPrefix": "ns:m/", "query": "tea", "scope": open_scope})
    found = service.fact_search.search_facts(operator, body)
    assert sorted(f.fact.event["kind"] for f in found.facts) == ["a", "b"]  # carol's is another agent's
    assert _kinds(service, operator, subjectPrefix="ns:m/") == ["a"]  # control: the full scope is alice's
    listed = service.fact_search.list_subjects(
        operator, SubjectQuery.model_validate({"subjectPrefix": "ns:", **open_scope})
    )
    assert listed.subjects == ["ns:m/alice/", "ns:m/bob/"]


def test_subjects_are_listed_once_in_order_a_page_at_a_time(service: MemoryService, operator: Caller) -> None:
    for subject in ("ns:b/", "ns:a/x/", "ns:a/", "ns:é/", "ns:a/", "other:z"):
        _put(service, operator, subject, f"k{len(subject)}", {"n": 1})
    gone = _put(service, operator, "ns:gone/", "k", {"n": 1})
    service.writes.retract_fact(operator, gone, RetractRequest.model_validate({"reason": "deleted", "scope": SCOPE}))
    query = {"subjectPrefix": "ns:", **SCOPE}
    first = service.fact_search.list_subjects(operator, SubjectQuery.model_validate({**query, "limit": 2}))
    assert first.subjects == ["ns:a/", "ns:a/x/"] and first.next_cursor == "ns:a/x/"
    rest = service.fact_search.list_subjects(operator, SubjectQuery.model_validate({**query, "after": "ns:a/x/"}))
    assert rest.subjects == ["ns:b/", "ns:é/"] and rest.next_cursor is None


def test_a_query_spanning_more_scopes_than_it_may_rank_names_the_query(
    service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tenant-wide query built every scope's copy to rank in it (21,000 scopes: 41-45 s, 1.2 GB)."""
    from engramdb.core import fact_ranking

    monkeypatch.setattr(fact_ranking, "MAX_RANKED_SCOPES", 2)
    for name in ("alice", "bob", "carol"):
        _put(
            service,
            operator,
            f"ns:m/{name}/",
            name,
            {"text": "tea"},
            scope=scope_fields(participantScopeHash=participant(name)),
        )
    open_scope = {k: v for k, v in SCOPE.items() if k != "participantScopeHash"}
    wide = FactSearch.model_validate({"subjectPrefix": "ns:m/", "query": "tea", "scope": open_scope})
    with pytest.raises(InvalidInputError) as refused:
        service.fact_search.search_facts(operator, wide)
    assert refused.value.field == "query"
    newest = FactSearch.model_validate({"subjectPrefix": "ns:m/", "scope": open_scope})  # no query: no ranking
    assert len(service.fact_search.search_facts(operator, newest).facts) == 3
    assert _kinds(service, operator, subjectPrefix="ns:m/", query="tea") == ["alice"]  # the control: one scope


def test_open_scope_fields_read_only_the_named_scopes_facts(settings: Any) -> None:
    """A host key's search (its agent and profile, any participant) read every current fact of the
    tenant: 2-4 s with 1,000,000 memories (a review helper's script). Counted here: the statements'
    SQLite steps, with another agent's facts few and then many; the same statement filtered on the
    facts' own columns is the positive control that the count sees a scan."""

    from engramdb.core.embedding import HashingEmbedder
    from engramdb.storage.sqlite.store import SQLiteStore

    store = SQLiteStore(settings.home)
    service = MemoryService(store, HashingEmbedder(), settings)
    operator = Caller(tenant="t1", key_id="op", role="admin")
    store.tenant("t1", create=True)
    other = scope_fields(agentId="other-agent")
    _put(service, operator, "ns:h/", "mine", {"text": "tea"})
    _put(service, operator, "ns:h/", "theirs", {"text": "tea"}, scope=other)
    tenant = store.tenant("t1")
    open_scope = {k: v for k, v in SCOPE.items() if k != "participantScopeHash"}
    seen: list[tuple[str, Any]] = []
    real = tenant._fact_search_fetch

    def cost() -> tuple[int, int]:
        seen.clear()
        tenant._fact_search_fetch = lambda sql, params: seen.append((sql, params)) or real(sql, params)  # type: ignore[func-returns-value]
        try:
            body = FactSearch.model_validate({"subjectPrefix": "ns:", "scope": open_scope})
            assert [f.fact.event["kind"] for f in service.fact_search.search_facts(operator, body).facts] == ["mine"]
        finally:
            tenant._fact_search_fetch = real
        scan = "SELECT count(*) FROM memories m WHERE m.agent_id = ? AND m.profile_id = ? AND m.status = 'active'"
        return vm_steps(tenant.path, seen), vm_steps(tenant.path, [(scan, [SCOPE["agentId"], SCOPE["profileId"]])])

    try:
        before, scan_before = cost()
        for start in range(0, 600, 100):
            bodies = [fact_body(f"{i}", scope=other, subject=f"ns:o{i}/", kind="k") for i in range(start, start + 100)]
            for body in bodies:
                service.writes.write_fact(operator, FactWrite.model_validate(body))
        after, scan_after = cost()
    finally:
        store.close()
    assert scan_after > scan_before + 600  # the positive control: a filter on the facts' columns scans them
    assert after == before  # the open fields name scopes: the other agent's 600 facts are not read
