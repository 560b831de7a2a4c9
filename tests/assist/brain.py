"""A scripted model for the tests: each prompt (extract, judge, reflect, consolidate) answered
from rules a test sets, as a real model would answer, through the real HTTP client."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.sdk.chat_server import Reply, data_of, purpose_of


@dataclass
class Brain:
    """Rules, matched by substrings of the data the server sends."""

    facts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (in a turn, the fact)
    verdicts: list[dict[str, Any]] = field(default_factory=list)  # about (candidate), of (neighbour) or ref, ...
    reflections: list[dict[str, Any]] = field(default_factory=list)  # text, evidence (substrings) or refs
    merge: dict[str, Any] | None = None  # the answer for every consolidation group; None: merge as one
    raw: list[str | Reply] = field(default_factory=list)  # answers sent first, verbatim, in order
    seen: list[tuple[str, Any]] = field(default_factory=list)  # (purpose, data) of every request

    def __call__(self, messages: list[dict[str, Any]]) -> str | Reply:
        purpose = purpose_of(messages)
        self.seen.append((purpose, data_of(messages) if purpose != "chat" else None))
        if self.raw:
            return self.raw.pop(0)
        data = data_of(messages)
        answer = {
            "extract": self._extract,
            "judge": self._judge,
            "reflect": self._reflect,
            "consolidate": self._consolidate,
        }[purpose](data)
        return json.dumps(answer)

    def asked(self, purpose: str) -> list[Any]:
        """The data of every request of one purpose, in order."""
        return [data for p, data in self.seen if p == purpose]

    def _extract(self, data: dict[str, Any]) -> dict[str, Any]:
        found = []
        for index, turn in enumerate(data["turns"]):
            said = f"{turn['user']}\n{turn['assistant']}"
            found += [{"turn": index, **fact} for needle, fact in self.facts if needle in said]
        return {"facts": found}

    def _judge(self, data: dict[str, Any]) -> dict[str, Any]:
        verdicts = []
        for candidate in data["candidates"]:
            for rule in self.verdicts:
                if rule["about"] not in candidate["text"]:
                    continue
                refs = (
                    [rule["ref"]]
                    if "ref" in rule
                    else [n["ref"] for n in candidate["neighbours"] if rule["of"] in n["text"]]
                )
                verdicts += [
                    {
                        "candidate": candidate["candidate"],
                        "ref": ref,
                        "verdict": rule["verdict"],
                        "confidence": rule.get("confidence", 0.9),
                        "reason": rule.get("reason", "scripted"),
                    }
                    for ref in refs
                ]
        return {"verdicts": verdicts}

    def _reflect(self, data: dict[str, Any]) -> dict[str, Any]:
        out = []
        for rule in self.reflections:
            refs = rule.get("refs") or [
                f["ref"] for f in data["facts"] if any(s in f["text"] for s in rule["evidence"])
            ]
            out.append(
                {
                    "text": rule["text"],
                    "evidence": refs,
                    "confidence": rule.get("confidence", 0.7),
                    **({"subjectKey": rule["subjectKey"]} if "subjectKey" in rule else {}),
                }
            )
        return {"reflections": out}

    def _consolidate(self, data: dict[str, Any]) -> dict[str, Any]:
        groups = []
        for group in data["groups"]:
            answer = self.merge or {"merge": True, "text": " and ".join(f["text"].rstrip(".") for f in group["facts"])}
            groups.append({"group": group["group"], **answer})
        return {"groups": groups}
