"""The TypeScript contract computes the Python SDK's ids and canonical JSON for the same random inputs."""

from __future__ import annotations

import json
import random
from typing import Any

from engramdb.contract.canonical import canonical_json, event_id, fact_id, hash_scope
from engramdb.devtools.node import node

ALPHABET = 'aZ09 _-.:/\u00e9\u00df\u4e2d\u00a0\u2028\u3000\ufeff\u001f\u0085\U0001f600"\\\n\t'


def _text(rng: random.Random, most: int = 12) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, most)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randint(0, 7 if depth < 3 else 4)
    if pick == 0:
        return rng.choice([None, True, False])
    if pick == 1:
        return rng.randint(-(2**53) + 1, 2**53 - 1)
    if pick == 2:
        return rng.choice([0.1, -2.5e-7, 1e21, 123456.789, 5e-324, 1.7976931348623157e308, rng.uniform(-1e6, 1e6)])
    if pick in (3, 4):
        return _text(rng) + rng.choice(["", "\ud800"])  # a lone surrogate: escaped by both
    if pick == 5:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {_text(rng, 6): _value(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def _cases(rng: random.Random) -> list[tuple[dict[str, Any], str]]:
    """(case for node, the Python answer) for random episodes, facts, scopes and JSON values."""
    cases = []
    for _ in range(150):
        episode = {
            "runtime": rng.choice(["openclaw", "hermes", "custom"]),
            "agentId": _text(rng),
            "profileId": _text(rng),
            "externalSessionId": _text(rng),
            "turnIndex": rng.randint(0, 10**6),
            "userText": _text(rng, 60),
            "assistantText": _text(rng, 60),
            "sourceEventId": rng.choice([None, _text(rng)]),
        }
        cases.append(({"kind": "episode", "input": episode}, event_id(**_snake(episode))))
        fact = {k: _text(rng) for k in ("agentId", "profileId", "participantScopeHash", "subjectKey", "kind")}
        fact |= {"runtime": "openclaw", "sourceEventId": _text(rng), "text": _text(rng, 60)}
        cases.append(({"kind": "fact", "input": fact}, fact_id(**_snake(fact))))
        parts, salt = [_text(rng) for _ in range(rng.randint(1, 4))], _text(rng)
        cases.append(({"kind": "scope", "input": {"parts": parts, "salt": salt}}, hash_scope(parts, salt)))
        value = _value(rng)
        cases.append(({"kind": "canonical", "input": value}, canonical_json(value)))
    return cases


def _snake(fields: dict[str, Any]) -> dict[str, Any]:
    return {"".join(f"_{c.lower()}" if c.isupper() else c for c in k): v for k, v in fields.items()}


def _same_answers(seed: int) -> tuple[dict[str, Any], str]:
    """Send seed's cases to the TypeScript contract; assert each answer is Python's; return the first case."""
    cases = _cases(random.Random(seed))
    done = node("packages/client/test/ids-stdin.ts", input_text=json.dumps([c for c, _ in cases]))
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout)
    assert len(answers) == len(cases)
    for (case, expected), answer in zip(cases, answers, strict=True):
        assert answer == expected, f"seed {seed}: {case}"
    return cases[0]


def test_random_events_get_the_same_ids_in_typescript_and_python(workspace: dict[str, str]) -> None:
    case, expected = _same_answers(random.randrange(2**32))
    # Positive control: a changed input gives another id in TypeScript too.
    first = dict(case["input"], turnIndex=case["input"]["turnIndex"] + 1)
    other = node("packages/client/test/ids-stdin.ts", input_text=json.dumps([{"kind": "episode", "input": first}]))
    assert json.loads(other.stdout) != [expected]


def test_the_seed_node_26_10_misread_gets_the_same_answers(workspace: dict[str, str]) -> None:
    # Node 26.10.0's JSON.parse read a key "\u2028" of this seed's cases as "\\" (a backslash), after
    # another case's key "\\": the answers differed there. The toolchain's Node (26.12.1) reads it right.
    _same_answers(3487667537)
