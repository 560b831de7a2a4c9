"""Text bounds: NULs stripped everywhere, caps enforced per field with a 422 naming the field."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from engramdb.contract.bounds import (
    QUERY_CAP,
    REASON_CAP,
    TEXT_CAPS,
    check_caps,
    check_text,
    strip_nul,
)
from engramdb.contract.writes import EpisodeWrite
from engramdb.errors import InvalidInputError

from . import _helpers as h


def test_strip_nul_nested_structures() -> None:
    value = {
        "userText": "a\x00b\x00",
        "list": ["\x00", "x\x00y", ["\x00\x00z", {"deep": "\x00d\x00e\x00p"}]],
        "inner": {"k": "v\x00", "n": 0, "f": 1.5, "t": True, "none": None, "empty": ""},
        "number": 7,
    }
    original = copy.deepcopy(value)
    assert strip_nul(value) == {
        "userText": "ab",
        "list": ["", "xy", ["z", {"deep": "dep"}]],
        "inner": {"k": "v", "n": 0, "f": 1.5, "t": True, "none": None, "empty": ""},
        "number": 7,
    }
    assert value == original  # the input is not modified


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("\x00", ""),
        ("no nul", "no nul"),
        ("é\x00\U0001f600", "é\U0001f600"),
        (["\x00a"], ["a"]),
        ([], []),
        ({}, {}),
        (None, None),
        (0, 0),
        (False, False),
    ],
)
def test_strip_nul_scalars_and_empty_containers(value: Any, expected: Any) -> None:
    result = strip_nul(value)
    assert h.strictly_equal(result, expected)


def test_strip_nul_leaves_no_nul_anywhere_in_an_event() -> None:
    event = h.base_episode()
    poisoned = {k: (v[:3] + "\x00" + v[3:] if isinstance(v, str) else v) for k, v in event.items()}
    cleaned = strip_nul(poisoned)
    assert "\x00" not in repr(cleaned)
    assert cleaned == event


def test_caps_match_the_documented_values() -> None:
    assert TEXT_CAPS["userText"] == TEXT_CAPS["assistantText"] == 16_000
    assert TEXT_CAPS["summary"] == TEXT_CAPS["text"] == 4_000
    assert QUERY_CAP == 4_000  # the reference client's recall query cut
    assert REASON_CAP == 1_000
    assert set(TEXT_CAPS) <= set(h.schema()["$defs"]["episode"]["allOf"][1]["properties"]) | set(
        h.schema()["$defs"]["fact"]["allOf"][1]["properties"]
    ), "every capped field is a contract field"


@pytest.mark.parametrize(("field", "cap"), sorted(TEXT_CAPS.items()))
def test_check_caps_at_and_over_the_cap(field: str, cap: int) -> None:
    check_caps({field: "x" * cap})  # exactly the cap is allowed
    check_caps({field: "\U0001f600" * cap})  # counted in characters, not bytes or UTF-16
    with pytest.raises(InvalidInputError) as excinfo:
        check_caps({field: "x" * (cap + 1)})
    error = excinfo.value
    assert error.field == field
    assert error.http_status == 422
    assert error.code == "invalid_input"
    assert error.context["limit"] == cap
    assert field in str(error) and str(cap) in str(error)
    assert error.to_dict()["field"] == field


def test_check_caps_passes_a_valid_event_and_ignores_non_strings() -> None:
    check_caps(h.base_episode())
    check_caps(h.base_fact())
    check_caps({"userText": None, "summary": 10**9, "text": ["x" * 10_000], "unknown": "x" * 10**5})


def test_check_caps_names_the_first_field_over_its_cap() -> None:
    body = {field: "x" * (cap + 1) for field, cap in TEXT_CAPS.items()}
    with pytest.raises(InvalidInputError) as excinfo:
        check_caps(dict(reversed(list(body.items()))))
    assert excinfo.value.field == next(iter(TEXT_CAPS))


def test_check_caps_names_the_only_offending_field_among_valid_ones() -> None:
    body = {**h.base_episode(), "summary": "s" * 4_001}
    with pytest.raises(InvalidInputError) as excinfo:
        check_caps(body)
    assert excinfo.value.field == "summary"


@pytest.mark.parametrize("cap", [1, 64, QUERY_CAP])
def test_check_text_strips_nul_then_checks_the_cap(cap: int) -> None:
    assert check_text("query", "q" * cap, cap) == "q" * cap
    assert check_text("query", "\x00" + "q" * cap + "\x00", cap) == "q" * cap
    with pytest.raises(InvalidInputError) as excinfo:
        check_text("query", "q" * (cap + 1), cap)
    assert excinfo.value.field == "query"
    assert excinfo.value.context["limit"] == cap


@pytest.mark.parametrize("key", ["userText", "user_text"])
def test_write_body_cannot_bypass_a_cap_by_spelling_the_field_differently(key: str) -> None:
    # EpisodeWrite checks caps on the raw body by wire name; a body that names the field any
    # other way must be refused too (as an unknown field, or by the cap), never stored.
    body = dict(h.fixture()["episodeInput"])
    del body["userText"]
    body[key] = "x" * (TEXT_CAPS["userText"] + 1)
    with pytest.raises((InvalidInputError, ValidationError)):
        EpisodeWrite.model_validate(body)


def test_turn_index_beyond_javascript_safe_integers_is_refused_on_write() -> None:
    # The contract admits it, but the reference hashes it as a rounded double, so our id would
    # differ from RushDB's: the write path refuses it, naming the field.
    from engramdb.contract.bounds import MAX_SAFE_INTEGER
    from engramdb.contract.writes import EpisodeWrite

    body = dict(h.fixture()["episodeInput"])
    assert EpisodeWrite.model_validate({**body, "turnIndex": MAX_SAFE_INTEGER}).turn_index == MAX_SAFE_INTEGER
    with pytest.raises(InvalidInputError) as refused:
        EpisodeWrite.model_validate({**body, "turnIndex": MAX_SAFE_INTEGER + 1})
    assert refused.value.field == "turnIndex"
