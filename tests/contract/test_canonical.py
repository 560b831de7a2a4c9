"""Canonical JSON, ids and scope hashing are byte-compatible with RushDB's JavaScript reference."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramdb.contract import canonical
from engramdb.contract.canonical import canonical_json, event_id, fact_id, hash_scope, js_trim
from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite, FactWrite

from . import _helpers as h

SETTINGS = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow],
)
# Nested values are slow to generate; fewer of them keeps the whole suite well under 20 s.
NESTED_SETTINGS = settings(SETTINGS, max_examples=100)

# --- the shared fixture -----------------------------------------------------------------------


def _fixture_scope() -> Scope:
    episode_input = h.fixture()["episodeInput"]
    return Scope.model_validate({k: episode_input[k] for k in h.SCOPE_FIELDS})


def test_fixture_episode_write_reproduces_expected_event_id() -> None:
    data = h.fixture()
    event = EpisodeWrite.model_validate(data["episodeInput"]).to_event(_fixture_scope())
    assert event.event_id == data["expectedEventId"]
    # The complete event is the fixture input plus version, type and id, and it is schema-valid.
    assert event.wire() == h.base_episode()
    assert h.validator().is_valid(event.wire()), h.schema_errors(event.wire())


def test_fixture_event_id_function_reproduces_expected_event_id() -> None:
    data = h.fixture()
    e = data["episodeInput"]
    got = event_id(
        runtime=e["runtime"],
        agent_id=e["agentId"],
        profile_id=e["profileId"],
        external_session_id=e["externalSessionId"],
        turn_index=e["turnIndex"],
        user_text=e["userText"],
        assistant_text=e["assistantText"],
        source_event_id=e["sourceEventId"],
    )
    assert got == data["expectedEventId"]


def test_fixture_event_id_matches_independent_payload_hash() -> None:
    # The README's payload, canonicalised by the test's own stableStringify.
    data = h.fixture()
    e = data["episodeInput"]
    payload = {
        "schemaVersion": 1,
        "eventType": "episode",
        **{
            k: e[k]
            for k in (
                "runtime",
                "agentId",
                "profileId",
                "externalSessionId",
                "sourceEventId",
                "turnIndex",
                "userText",
                "assistantText",
            )
        },
    }
    digest = hashlib.sha256(h.stable_stringify(payload).encode("utf-8")).hexdigest()
    assert digest == data["expectedEventId"]


@pytest.mark.parametrize(
    ("field", "value", "changes_id"),
    [
        ("turnIndex", 8, True),
        ("userText", "Prefer Rust for this service.", True),
        ("externalSessionId", "session-43", True),
        ("runtime", "openclaw", True),
        ("agentId", "reviewer", True),
        ("summary", "Something else entirely.", False),
        ("privacyScope", "shared", False),
        ("observedAt", "2027-01-01T00:00:00Z", False),
        ("trustClass", "trusted", False),
    ],
)
def test_event_id_depends_on_exactly_the_hashed_fields(field: str, value: Any, changes_id: bool) -> None:
    data = h.fixture()
    body = {**data["episodeInput"], field: value}
    scope = Scope.model_validate({k: body[k] for k in h.SCOPE_FIELDS})
    got = EpisodeWrite.model_validate(body).to_event(scope).event_id
    assert (got != data["expectedEventId"]) is changes_id


def test_missing_source_event_id_hashes_as_empty_string() -> None:
    body = dict(h.fixture()["episodeInput"])
    del body["sourceEventId"]
    without = EpisodeWrite.model_validate(body).to_event(_fixture_scope()).event_id
    empty = EpisodeWrite.model_validate({**body, "sourceEventId": ""})
    assert without == empty.to_event(_fixture_scope()).event_id
    assert without != h.fixture()["expectedEventId"]


def test_fact_id_matches_node_reference() -> None:
    fact = h.base_fact()
    got = fact_id(
        runtime=fact["runtime"],
        agent_id=fact["agentId"],
        profile_id=fact["profileId"],
        participant_scope_hash=fact["participantScopeHash"],
        subject_key=fact["subjectKey"],
        kind=fact["kind"],
        source_event_id=fact["sourceEventId"],
        text=fact["text"],
    )
    assert got == h.BASE_FACT_ID
    write = {k: v for k, v in fact.items() if k not in ("factId", *h.SCOPE_FIELDS)}
    scope = Scope.model_validate({k: fact[k] for k in h.SCOPE_FIELDS})
    event = FactWrite.model_validate(write).to_event(scope)
    assert event.fact_id == h.BASE_FACT_ID
    assert event.wire() == fact


def test_fact_id_ignores_active_and_confidence() -> None:
    fact = h.base_fact()
    write = {k: v for k, v in fact.items() if k not in ("factId", *h.SCOPE_FIELDS)}
    scope = Scope.model_validate({k: fact[k] for k in h.SCOPE_FIELDS})
    changed = {**write, "active": False, "confidence": 0.1, "validFrom": "2030-01-01T00:00:00Z"}
    assert FactWrite.model_validate(changed).to_event(scope).fact_id == h.BASE_FACT_ID
    other = {**write, "text": "The user prefers Go."}
    assert FactWrite.model_validate(other).to_event(scope).fact_id != h.BASE_FACT_ID


# --- hash_scope -------------------------------------------------------------------------------


def test_hash_scope_readme_example() -> None:
    digest = hash_scope(["discord", "account-1", "user-42"], "")
    assert digest.startswith("d2097b10")
    # Full digest from Node.js:
    #   sha256(`${salt}\u001e${parts.map((p) => (p ?? "").trim()).join("\u001f")}`)
    assert digest == "d2097b100b0241e42967c210545e6621f46f3090eb6a3aa3a0fba4f221fe486f"


def test_hash_scope_matches_node_with_js_whitespace_none_and_salt() -> None:
    parts = [" \ufeffdiscord\u3000", "account-1\u2028", None, "x"]
    assert hash_scope(parts, "salt") == ("5e7f6eab48a7eee53ee684ff78c7134a948e5fdb8303ef8c9ae651ca92106555")


def test_hash_scope_none_part_is_empty_string() -> None:
    assert hash_scope(["a", None, "c"]) == hash_scope(["a", "", "c"])
    assert hash_scope([None]) == hash_scope([""])
    assert hash_scope(["a", None]) != hash_scope(["a"])  # the separator still counts


def test_hash_scope_separators_are_not_ambiguous() -> None:
    assert hash_scope(["ab", "c"]) != hash_scope(["a", "bc"])
    assert hash_scope(["a"], "s") != hash_scope(["s", "a"])


@pytest.mark.parametrize("pad", ["\u0020", "\t", "\ufeff", "\u00a0", "\u2028", "\u3000", "\n\r"])
def test_hash_scope_ignores_js_whitespace_padding(pad: str) -> None:
    plain = hash_scope(["discord", "account-1", "user-42"])
    assert hash_scope([pad + "discord", "account-1" + pad, pad + "user-42" + pad]) == plain


@pytest.mark.parametrize("pad", ["\u001f", "\u001c", "\u001e", "\u0085", "\u200b", "\u180e"])
def test_hash_scope_keeps_non_js_whitespace_padding(pad: str) -> None:
    # Python's str.strip() would remove \x1c-\x1f and \x85; JavaScript's trim() does not.
    plain = hash_scope(["discord", "account-1", "user-42"])
    assert hash_scope([pad + "discord", "account-1", "user-42"]) != plain
    assert hash_scope(["discord", "account-1" + pad, "user-42"]) != plain


# --- js_trim ----------------------------------------------------------------------------------

_TRIM_POOL = [
    "\u001c",
    "\u001d",
    "\u001e",
    "\u001f",
    "\u0085",
    "\ufeff",
    "\u00a0",
    "\u2028",
    "\u2029",
    "\u3000",
    "\u1680",
    "\u2000",
    "\u200a",
    "\u200b",
    "\u202f",
    "\u205f",
    "\u180e",
    "\t",
    "\n",
    "\v",
    "\f",
    "\r",
    " ",
    "a",
    "b",
    "Z",
    "é",
    "\U0001f600",
]


@SETTINGS
@given(st.lists(st.sampled_from(_TRIM_POOL), max_size=12).map("".join))
def test_js_trim_matches_ecmascript_trim(value: str) -> None:
    expected = h.js_trim(value)
    assert js_trim(value) == expected
    assert hash_scope([value]) == hashlib.sha256(f"\u001e{expected}".encode()).hexdigest()


@SETTINGS
@given(
    st.lists(st.one_of(st.none(), st.text(st.sampled_from(_TRIM_POOL), max_size=6)), max_size=4),
    st.text(max_size=5),
)
def test_hash_scope_matches_independent_definition(parts: list[str | None], salt: str) -> None:
    joined = "\u001f".join(h.js_trim(p or "") for p in parts)
    expected = hashlib.sha256(f"{salt}\u001e{joined}".encode()).hexdigest()
    assert hash_scope(parts, salt) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("\x1f a \x1f", "\x1f a \x1f"),  # str.strip() gives "a"
        ("\ufeffa\ufeff", "a"),  # str.strip() keeps the U+FEFF
        ("\x85a", "\x85a"),  # str.strip() gives "a"
        ("\x1c\x1d\x1e", "\x1c\x1d\x1e"),
        ("\u00a0\u2028\u3000a b\u2029\u202f", "a b"),
        ("\u200ba\u200b", "\u200ba\u200b"),  # zero width space is not Zs
        ("\u180ea", "\u180ea"),  # Mongolian vowel separator left Zs in Unicode 6.3
        (" \t\n\v\f\r", ""),
        ("", ""),
    ],
)
def test_js_trim_concrete_cases(value: str, expected: str) -> None:
    assert js_trim(value) == expected
    assert h.js_trim(value) == expected  # the oracle agrees with the hand-written answer


def test_js_trim_differs_from_python_strip_where_it_should() -> None:
    assert js_trim("\x1f a \x1f") != "\x1f a \x1f".strip()
    assert js_trim("\ufeffa\ufeff") != "\ufeffa\ufeff".strip()
    assert js_trim("\x85a") != "\x85a".strip()


# --- canonical_json: properties ---------------------------------------------------------------

_KEY_CHARS = st.sampled_from(
    [
        "a",
        "b",
        "A",
        "Z",
        "é",
        "ß",
        "\uff61",
        "\ufb01",
        "\ue000",
        "\U0001f600",
        "\U00010000",
        "\U0010fffd",
        "\x00",
        "\x1f",
        '"',
        "\\",
        "\u2028",
        " ",
    ]
)
KEYS = st.one_of(st.text(_KEY_CHARS, max_size=4), st.text(max_size=4))
STRINGS = st.one_of(
    st.text(),
    st.text(st.characters(max_codepoint=0x3F)),  # controls, quotes, backslash
    st.text(_KEY_CHARS),
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), STRINGS)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(KEYS, children, max_size=5)),
    max_leaves=25,
)


def _ordered_pairs(text: str) -> list[list[str]]:
    """Every object's keys, in the order they appear in ``text``."""
    seen: list[list[str]] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen.append([k for k, _ in pairs])
        return dict(pairs)

    json.loads(text, object_pairs_hook=hook)
    return seen


def _outside_strings(text: str) -> str:
    """``text`` with the contents of every JSON string removed."""
    out, in_string, escaped = [], False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        else:
            out.append(ch)
    return "".join(out)


@NESTED_SETTINGS
@given(JSON_VALUES)
def test_canonical_json_round_trips(value: Any) -> None:
    text = canonical_json(value)
    assert h.strictly_equal(json.loads(text), value)


@NESTED_SETTINGS
@given(JSON_VALUES)
def test_canonical_json_matches_independent_stable_stringify(value: Any) -> None:
    assert canonical_json(value) == h.stable_stringify(value)


@NESTED_SETTINGS
@given(JSON_VALUES)
def test_canonical_json_keys_sorted_by_utf16_at_every_level(value: Any) -> None:
    for keys in _ordered_pairs(canonical_json(value)):
        units = [h.utf16_units(k) for k in keys]
        assert units == sorted(units)
        assert len(set(keys)) == len(keys)


@NESTED_SETTINGS
@given(JSON_VALUES)
def test_canonical_json_is_idempotent(value: Any) -> None:
    text = canonical_json(value)
    assert canonical_json(json.loads(text)) == text


@NESTED_SETTINGS
@given(JSON_VALUES)
def test_canonical_json_has_no_whitespace_outside_strings(value: Any) -> None:
    skeleton = _outside_strings(canonical_json(value))
    assert not any(ch in skeleton for ch in " \t\n\r")
    assert ", " not in skeleton and ": " not in skeleton


@NESTED_SETTINGS
@given(JSON_VALUES)
def test_canonical_json_independent_of_dict_order(value: Any) -> None:
    assert canonical_json(h.reversed_order(value)) == canonical_json(value)


# Floats, lone surrogates and keys past ASCII mixed in: what json's C encoder would write otherwise.
MIXED_SCALARS = st.one_of(
    SCALARS,
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.sampled_from(["a", "é", "\ud800", "\udfff", "\x01", "\U0001f600"])),
)
MIXED_VALUES = st.recursive(
    MIXED_SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(KEYS, children, max_size=5)),
    max_leaves=25,
)


@NESTED_SETTINGS
@given(MIXED_VALUES)
def test_canonical_json_matches_stable_stringify_with_floats_and_surrogates_anywhere(value: Any) -> None:
    assert canonical_json(value) == h.stable_stringify(value)


def test_only_plain_values_take_jsons_own_encoder() -> None:
    """canonical_json hands a value to json's C encoder only where it writes what stableStringify does."""
    import collections
    import enum

    class Level(enum.IntEnum):
        HIGH = 3

    event = {"schemaVersion": 1, "userText": "naïve \u2028 text", "turnIndex": 3, "tags": ["a", ("b",)], "x": None}
    assert canonical._plain(event) and canonical._plain([True, 10**30, "\ud800"])  # controls: taken
    for value in (
        {"n": 1.5},  # JavaScript prints floats its own way
        {"é": 1},  # sorted by UTF-16 code unit, not code point
        {1: "a"},  # not a JSON key
        collections.OrderedDict(a=1),
        [Level.HIGH],  # json writes an int subclass as int.__repr__ does
    ):
        assert not canonical._plain(value), value
    assert canonical_json({"n": 1.5, "l": [1.0]}) == '{"l":[1],"n":1.5}'
    assert canonical_json({"k": ["\ud800"]}) == '{"k":["\\ud800"]}'  # plain, yet escaped as JavaScript does
    assert canonical_json(event) == h.stable_stringify({**event, "tags": ["a", ["b"]]})


@SETTINGS
@given(st.integers())
def test_canonical_json_integers_stay_integers(n: int) -> None:
    text = canonical_json({"n": n, "l": [n]})
    assert text == f'{{"l":[{n}],"n":{n}}}'
    assert type(json.loads(text)["n"]) is int


@SETTINGS
@given(st.text())
def test_canonical_json_leaves_non_ascii_unescaped(value: str) -> None:
    text = canonical_json(value)
    assert text == h.js_quote(value)
    for ch in value:
        if ord(ch) >= 0x20 and ch not in '"\\':
            assert ch in text  # printable ASCII and every non-ASCII character written raw
    body, i, unicode_escapes = text[1:-1], 0, []
    while i < len(body):
        if body[i] == "\\":
            if body[i + 1] == "u":
                unicode_escapes.append(int(body[i + 2 : i + 6], 16))
            i += 6 if body[i + 1] == "u" else 2
        else:
            i += 1
    assert all(cp < 0x20 for cp in unicode_escapes)  # only controls are \u-escaped


@SETTINGS
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_canonical_json_floats_as_javascript_prints_them(x: float) -> None:
    text = canonical_json(x)
    assert text == h.js_number_to_string(x)
    assert float(text) == x  # reads back as the same double (JS pads digits with zeros)


# --- canonical_json: concrete cases -----------------------------------------------------------


def test_keys_sort_by_utf16_code_units_not_code_points() -> None:
    # Code points: U+FF61 < U+1F600. UTF-16: 0xFF61 > 0xD83D (the emoji's high surrogate).
    value = {"\uff61": 1, "\U0001f600": 2}
    assert sorted(value) == ["\uff61", "\U0001f600"]  # Python's order, the wrong one
    assert canonical_json(value) == '{"\U0001f600":2,"\uff61":1}'
    nested = {"k": [{"\uff61": {"\ue000": 0, "\U00010000": 1}, "\U0001f600": None}]}
    assert canonical_json(nested) == ('{"k":[{"\U0001f600":null,"\uff61":{"\U00010000":1,"\ue000":0}}]}')


def test_nested_value_matches_node_stable_stringify() -> None:
    value = {
        "\uff61": {"b": [1, {"\U0001f600": None, "a": "é\u2028\x01"}], "a": True},
        "\U0001f600": -0.0,
        "Z": 1e21,
        "z": 1e-7,
        "": "\ud800",
        "é": 0.1,
    }
    # Output of the Node.js stableStringify (see _helpers.BASE_FACT_ID) for the same value.
    expected = (
        '{"":"\\ud800","Z":1e+21,"z":1e-7,"é":0.1,"\U0001f600":0,'
        '"\uff61":{"a":true,"b":[1,{"a":"é\u2028\\u0001","\U0001f600":null}]}}'
    )
    assert canonical_json(value) == expected
    assert (
        canonical.sha256_hex(canonical_json(value))
        == "e922077b04d9f6d28b51a3ab91aa1a1740f840b33ed3eb9afc62f3a85eb2505a"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # Numbers, as `JSON.stringify(x)` prints them in Node.js.
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (7.0, "7"),
        (0.1, "0.1"),
        (-0.0, "0"),
        (1e20, "100000000000000000000"),
        (-1.5e-7, "-1.5e-7"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (123.456, "123.456"),
        (1e-6, "0.000001"),
        (1e-5, "0.00001"),
        (1.5e-5, "0.000015"),
        (1.234e-6, "0.000001234"),
        (2.0**60, "1152921504606847000"),
        (123456789012345680000.0, "123456789012345680000"),
        (math.nan, "null"),
        (math.inf, "null"),
        # Strings.
        ("\u2028", '"\u2028"'),
        ("\u2029", '"\u2029"'),
        ("\x7f", '"\x7f"'),
        ("\x01", '"\\u0001"'),
        ("\x1f", '"\\u001f"'),
        ("\x00", '"\\u0000"'),
        ("\ud800", '"\\ud800"'),
        ("\udfff", '"\\udfff"'),
        ('"\\/', '"\\"\\\\/"'),
        ("\b\t\n\f\r", '"\\b\\t\\n\\f\\r"'),
        ("é\U0001f600\u00a0\ufeff", '"é\U0001f600\u00a0\ufeff"'),
        # Other scalars and containers.
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (7, "7"),
        (10**30, "1000000000000000000000000000000"),
        ([], "[]"),
        ({}, "{}"),
        ([1, [None, {}], "x"], '[1,[null,{}],"x"]'),
        ({"b": 1, "a": {"d": [], "c": None}}, '{"a":{"c":null,"d":[]},"b":1}'),
    ],
    ids=repr,
)
def test_canonical_json_known_javascript_outputs(value: Any, expected: str) -> None:
    assert canonical_json(value) == expected


def test_canonical_json_lone_surrogate_hashes_as_ascii_escape() -> None:
    text = canonical_json({"k": "a\ud800b"})
    assert text == '{"k":"a\\ud800b"}'
    assert canonical.sha256_hex(text) == hashlib.sha256(text.encode("ascii")).hexdigest()
