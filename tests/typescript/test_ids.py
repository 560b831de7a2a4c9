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
        cases.append(_canonical_case(value))
    return cases


def _canonical_case(value: Any) -> tuple[dict[str, Any], str]:
    return {"kind": "canonical", "input": _paired(value)}, canonical_json(value)


def _paired(value: Any) -> Any:
    """Objects as {"pairs": [[key, value], ...]}: the harness rebuilds them, so no random key meets
    Node 26.10's JSON.parse, which misreads some escaped one-character keys (see ids-stdin.ts)."""
    if isinstance(value, dict):
        return {"pairs": [[key, _paired(inner)] for key, inner in value.items()]}
    if isinstance(value, list):
        return [_paired(inner) for inner in value]
    return value


def _snake(fields: dict[str, Any]) -> dict[str, Any]:
    return {"".join(f"_{c.lower()}" if c.isupper() else c for c in k): v for k, v in fields.items()}


def test_random_events_get_the_same_ids_in_typescript_and_python(workspace: dict[str, str]) -> None:
    seed = random.randrange(2**32)
    cases = _cases(random.Random(seed))
    done = node("packages/client/test/ids-stdin.ts", input_text=json.dumps([c for c, _ in cases]))
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout)
    assert len(answers) == len(cases)
    for (case, expected), answer in zip(cases, answers, strict=True):
        assert answer == expected, f"seed {seed}: {case}"
    # Positive control: a changed input gives another id in TypeScript too.
    first = dict(cases[0][0]["input"], turnIndex=cases[0][0]["input"]["turnIndex"] + 1)
    other = node("packages/client/test/ids-stdin.ts", input_text=json.dumps([{"kind": "episode", "input": first}]))
    assert json.loads(other.stdout) != [cases[0][1]]


def test_keys_the_node_parser_misreads_get_the_same_canonical_json(workspace: dict[str, str]) -> None:
    # Seed 3487667537 drew these two keys; sent as JSON text, Node 26.10 read the inner key as "\\".
    value = [{"\\": {}}, [{"\u2028": {}}]]
    case, expected = _canonical_case(value)
    done = node("packages/client/test/ids-stdin.ts", input_text=json.dumps([case]))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [expected]
    assert expected == '[{"\\\\":{}},[{"\u2028":{}}]]'  # the key kept, not read as a backslash
    # Control: the same value as plain JSON text is misread by the pinned Node's parser. When a Node
    # upgrade fixes it this fails, and the pairs are no longer needed.
    script = "process.stdout.write(JSON.stringify(JSON.parse(require('fs').readFileSync(0, 'utf8'))))"
    plain = node("-e", script, input_text=json.dumps(value))
    assert json.loads(plain.stdout) == [{"\\": {}}, [{"\\": {}}]], "this Node parses the keys right"
