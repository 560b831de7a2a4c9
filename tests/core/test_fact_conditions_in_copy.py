"""A fact search that names one scope reads its conditions from the scope copy's field columns
(storage/fact_search/field_columns.py); one that leaves a scope field open reads them in SQL
(storage/fact_search/sql.py). Differential, on both backends: over a population of odd JSON
documents (nested values, big integers, numbers as floats, texts that are no JSON object) and any
condition hypothesis draws, both give the same facts in the same order. And the columns, once
filled, still see every fact written after them and none retracted since."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramdb.contract.writes import FactWrite
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.fact_search import FactSearch
from engramdb.models.lifecycle import RetractRequest
from engramdb.storage.port import Store
from tests.factories import fact_body, scope_fields

SCOPE = scope_fields()
OPEN = {key: value for key, value in SCOPE.items() if key != "privacyScope"}  # one field open: the SQL way
SCALARS = [None, True, False, 0, 1, -1, 2.5, 1.0, -0.5, 2**53 + 1, -(2**53 + 1), 2**64, 10**21, "red", "", "é", "1"]
COMPOUNDS = [[], [1, 2], ["red", None], [[1], {"x": 1}], {}, {"x": 1}, {"x": 1.0, "y": [True]}, {"y": [True], "x": 1}]
COMPOUNDS += [{"x": 10**21}, {"x": 1e21}, [None], [0.0]]
PATHS = [
    ("a",),
    ("b",),
    ("a", "x"),
    ("a", 0),
    ("a", "0"),
    ("a", 1),
    ("c", "y", 0),
    ("zz",),
    ("café",),
]  # "0": a key, never an index
NOT_OBJECTS = ["plain words", "[1, 2]", "7", "null", '{"a": NaN}', '{"a": 1', '"red"']
# Texts a backend reads otherwise than Python's parser (field_columns._document): SQL decides for them.
SQL_READS = [
    '{"a":' + "[" * 1_000 + "]" * 1_000 + "}",  # past Python's recursion limit
    '{"a": 18446744073709551617, "b": 1}',  # past 64 bits
    '{"a": 1.00000000000000001}',  # past a float64's precision
    '{"a": [1e400], "b": 1e400}',
    '{"a": 1, "a": "red"}',  # a key written twice
    '{"caf\\u00e9": 1, "a": "red"}',  # a key written escaped
    '{"a": "x\\u0000y", "b": 1}',
    '{"a": "\\ud800", "b": 1}',
    '{"a": {"x": 1e21}, "b": -0.0}',  # whole floats: equal to integers (read by the copy)
]


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 2 and roll < 0.2:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if depth < 2 and roll < 0.4:
        return {key: _value(rng, depth + 1) for key in rng.sample(["x", "y"], rng.randrange(3))}
    return rng.choice(COMPOUNDS) if roll < 0.55 else rng.choice(SCALARS)


def _population(count: int) -> list[str]:
    rng = random.Random(5)
    texts = NOT_OBJECTS + SQL_READS
    while len(texts) < count:
        document = {key: _value(rng) for key in rng.sample(["a", "b", "c"], rng.randrange(4))}
        texts.append(json.dumps(document, ensure_ascii=rng.random() < 0.5))
    return texts


def _put(service: MemoryService, caller: Caller, kind: str, text: str) -> str:
    body = fact_body(text, scope=SCOPE, subject="ns:c/", kind=kind)
    return service.writes.write_fact(caller, FactWrite.model_validate(body)).id


def _found(service: MemoryService, caller: Caller, scope: dict[str, Any], where: list[dict[str, Any]]) -> list[str]:
    body = {"scope": scope, "subjectPrefix": "ns:c/", "where": where, "limit": 1_000}
    page = service.fact_search.search_facts(caller, FactSearch.model_validate(body))
    return [str(f.fact.event["kind"]) for f in page.facts]


operands = st.sampled_from(SCALARS + COMPOUNDS)
numbers = st.sampled_from([n for n in SCALARS if type(n) in (int, float)] + [10**30, 2**53, -(2**63), 1e300])
conditions = st.one_of(
    st.builds(
        lambda p, op, v: {"path": p, "op": op, "value": v},
        st.sampled_from(PATHS).map(list),
        st.sampled_from(["eq", "ne"]),
        operands,
    ),
    st.builds(
        lambda p, op, v: {"path": p, "op": op, "value": v},
        st.sampled_from(PATHS).map(list),
        st.sampled_from(["gt", "gte", "lt", "lte", "eq", "ne"]),
        numbers,
    ),
    st.builds(
        lambda p, t: {"path": p, "op": "type", "value": t},
        st.sampled_from(PATHS).map(list),
        st.sampled_from(["object", "array", "string", "number", "boolean", "null"]),
    ),
    st.builds(
        lambda p, n: {"path": p, "op": "length", "value": n}, st.sampled_from(PATHS).map(list), st.integers(0, 3)
    ),
)


def _copy_fields(store: Store) -> int:
    """Bytes the held copies' field columns take (how a test tells the copy read the conditions)."""
    cache = store.scope_copies  # type: ignore[attr-defined]  # both backends' stores hold one
    return sum(copy.fields.nbytes for key, _ in cache.held() if (copy := cache.current(key)) is not None)


def test_the_copy_reads_conditions_as_sql_does(service: MemoryService, operator: Caller, store: Store) -> None:
    texts = _population(240)
    for i, text in enumerate(texts):
        _put(service, operator, f"f{i}", text)
    assert _copy_fields(store) == 0
    everything = _found(service, operator, SCOPE, [])
    assert len(everything) == len(texts) == len(_found(service, operator, OPEN, []))  # control: both see all
    red = [{"path": ["a"], "op": "eq", "value": "red"}]
    assert _found(service, operator, SCOPE, red) == _found(service, operator, OPEN, red) != []
    assert _copy_fields(store) > 0  # the named scope's search read them from its copy

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.lists(conditions, min_size=1, max_size=3))
    def same(where: list[dict[str, Any]]) -> None:
        assert _found(service, operator, SCOPE, where) == _found(service, operator, OPEN, where)

    same()


def test_the_columns_see_every_write_and_retraction_since(service: MemoryService, operator: Caller) -> None:
    first = [_put(service, operator, f"k{i}", json.dumps({"n": i})) for i in range(100)]
    few = [{"path": ["n"], "op": "gte", "value": 97}]
    assert _found(service, operator, SCOPE, few) == ["k99", "k98", "k97"]  # fills the column
    _put(service, operator, "k100", json.dumps({"n": 100}))
    _put(service, operator, "k101", "no JSON")
    _put(service, operator, "k102", json.dumps({"n": "100"}))  # a numeric string is no number
    assert _found(service, operator, SCOPE, few) == ["k100", "k99", "k98", "k97"]
    _put(service, operator, "k98", json.dumps({"n": 1}))  # a new version of k98: its old value is gone
    service.writes.retract_fact(operator, first[97], RetractRequest.model_validate({"reason": "x", "scope": SCOPE}))
    assert _found(service, operator, SCOPE, few) == ["k100", "k99"]
    assert _found(service, operator, OPEN, few) == ["k100", "k99"]  # control: the SQL way agrees
    assert _found(service, operator, SCOPE, [{"path": ["n"], "op": "eq", "value": 1}]) == ["k98", "k1"]


@pytest.mark.parametrize("count", [True, False])
def test_a_page_deep_among_few_that_meet_is_newest_first(service: MemoryService, operator: Caller, count: bool) -> None:
    for i in range(150):
        _put(service, operator, f"k{i}", json.dumps({"n": i, "rare": i % 37 == 0}))
    body = {"scope": SCOPE, "subjectPrefix": "ns:c/", "where": [{"path": ["rare"], "op": "eq", "value": True}]}
    page = service.fact_search.search_facts(
        operator, FactSearch.model_validate(body | {"offset": 1, "limit": 2, "count": count})
    )
    assert [str(f.fact.event["kind"]) for f in page.facts] == ["k111", "k74"]
    assert page.total == 5  # k0 k37 k74 k111 k148: past the first look, every fact was read


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"op": "eq", "value": 2**53}, ["at"]),  # 2**53 + 1 is the same float64, not the same number
        ({"op": "gt", "value": 2**53}, ["wide", "past"]),
        ({"op": "lte", "value": 2**53 + 1}, ["at", "past"]),
        ({"op": "ne", "value": 2**64}, ["at", "past", "text"]),
    ],
)
def test_integers_past_a_float64_compare_exactly(
    service: MemoryService, operator: Caller, condition: dict[str, Any], expected: list[str]
) -> None:
    for kind, n in (("text", "2"), ("past", 2**53 + 1), ("at", 2**53), ("wide", 2**64)):
        _put(service, operator, kind, json.dumps({"n": n}))
    where = [{"path": ["n"], **condition}]
    assert sorted(_found(service, operator, SCOPE, where)) == sorted(expected)
    assert sorted(_found(service, operator, OPEN, where)) == sorted(expected)  # control: the SQL way agrees


def test_the_columns_count_the_values_they_hold(service: MemoryService, operator: Caller, store: Store) -> None:
    """The scope cache's memory limit sees them: a path to long texts costs what the texts hold."""
    for i in range(40):
        _put(service, operator, f"k{i}", json.dumps({"n": i, "long": f"{i} " + "word " * 400}))
    assert _found(service, operator, SCOPE, [{"path": ["n"], "op": "eq", "value": 3}]) == ["k3"]
    numbers = _copy_fields(store)
    assert 0 < numbers < 40 * 2_000  # control: forty numbers, a few arrays' worth
    assert _found(service, operator, SCOPE, [{"path": ["long"], "op": "type", "value": "string"}]) != []
    assert _copy_fields(store) - numbers >= 40 * 2_000  # forty texts of ~2 kB each


def test_a_text_the_backends_read_their_own_way_is_decided_by_sql(service: MemoryService, operator: Caller) -> None:
    """Nested past Python's recursion limit, a key written twice, a NUL: answered as SQL answers."""
    for i, text in enumerate(SQL_READS):
        _put(service, operator, f"odd{i}", text)
    _put(service, operator, "plain", json.dumps({"a": [1], "b": 1}))
    arrays = [{"path": ["a"], "op": "type", "value": "array"}]
    found = _found(service, operator, SCOPE, arrays)
    assert {"odd0", "plain"} <= set(found)  # the deep one is an array to both backends, and no search fails
    assert found == _found(service, operator, OPEN, arrays)  # control: the SQL way, every row
    for where in ([{"path": ["a"], "op": "eq", "value": "red"}], [{"path": ["b"], "op": "eq", "value": 1}]):
        assert _found(service, operator, SCOPE, where) == _found(service, operator, OPEN, where)
