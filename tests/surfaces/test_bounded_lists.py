"""Every list a request may carry has a largest length, so no key can make the server check one
value against a list of a million.

A recall's ``kinds`` had none: each candidate (up to 1,600) was checked against the list, so one recall
of 100,000 kinds held its place in the recall lane for 11-16 s, and two of them held every place while
another tenant's recall waited 10.4-11.0 s (a review helper's script, session 46). Objects (a record's
data, a search's conditions) are bounded by what they hold, counted where they are read.
"""

from __future__ import annotations

import typing
from typing import Any

from annotated_types import MaxLen
from pydantic import BaseModel

from engramdb.models.operations import OPERATIONS
from engramdb.models.recall import MAX_KINDS
from tests.conftest import LiveServer
from tests.factories import fact_body

# Lists bounded by what they hold, counted where they are read.
COUNTED = {"write_records:RecordWrite.data": "core/knowledge/writing.py: MAX_RECORDS records, MAX_VALUES values"}


def _unbounded_lists(model: type[BaseModel], path: str, seen: set[type[BaseModel]]) -> list[str]:
    """The list fields of ``model`` and the models inside it that have no ``max_length``."""
    if model in seen:
        return []
    seen.add(model)
    found = []
    for name, info in model.model_fields.items():
        shapes = [info.annotation, *typing.get_args(info.annotation)]
        if any(typing.get_origin(s) in (list, set, frozenset, tuple) for s in shapes):
            if not any(isinstance(m, MaxLen) for m in info.metadata):
                found.append(f"{path}.{name}")
        inner = [a for s in shapes for a in (s, *typing.get_args(s))]
        for kind in inner:
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                found += _unbounded_lists(kind, f"{path}.{name}", seen)
    return found


def test_no_request_model_holds_a_list_without_a_largest_length() -> None:
    seen: set[type[BaseModel]] = set()
    found = [
        field
        for op in OPERATIONS
        for model in (op.body, op.query)
        if isinstance(model, type) and issubclass(model, BaseModel)
        for field in _unbounded_lists(model, f"{op.name}:{model.__name__}", seen)
    ]
    assert found == sorted(COUNTED)
    assert "recall" in {op.name for op in OPERATIONS}  # the walk saw the operations (a control)


class _Unbounded(BaseModel):
    names: list[str]


def test_the_walk_finds_a_list_without_a_largest_length() -> None:  # the positive control of the walk
    assert _unbounded_lists(_Unbounded, "x", set()) == ["x.names"]


def test_a_recall_names_at_most_the_largest_number_of_kinds(server: LiveServer) -> None:
    with server.client(server.key()) as agent:
        assert agent.post("/v1/facts", json=fact_body("Alice lives in Lyon", kind="city")).status_code == 201
        kinds: list[Any] = [f"kind-{i}" for i in range(MAX_KINDS - 1)] + ["city"]
        found = agent.post("/v1/recall", json={"query": "where does Alice live", "kinds": kinds})
        assert found.status_code == 200 and [m["text"] for m in found.json()["memories"]] == ["Alice lives in Lyon"]
        refused = agent.post("/v1/recall", json={"query": "where does Alice live", "kinds": [*kinds, "one more"]})
        assert refused.status_code == 422 and refused.json()["field"] == "kinds", refused.text
        both = ["EPISODE", "MEMORY_FACT"]
        assert agent.post("/v1/recall", json={"query": "Alice", "sources": both}).status_code == 200
        thrice = agent.post("/v1/recall", json={"query": "Alice", "sources": [*both, "EPISODE"]})
        assert thrice.status_code == 422 and thrice.json()["field"] == "sources", thrice.text
