"""What a fault run must end with, checked against what the server serves and what it stores.

``compare`` is pure: given the writes that were acknowledged (id -> content) and the rows found, it
names the missing ids, the ids and contents found more than once, and the rows nobody wrote. The
fault tests feed it a deliberately missing id and a duplicated row as positive controls.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from engramdb.storage.registry import open_store


@dataclass(frozen=True)
class Row:
    """One stored memory as read back: its id, its content (userText or fact text), its status."""

    id: str
    content: str
    status: str = "active"
    slot: tuple[str, str] | None = None


@dataclass(frozen=True)
class Verdict:
    expected: int
    found: int  # expected ids that were found (at least once)
    missing: list[str]
    duplicate_ids: list[str]
    duplicate_contents: list[str]
    unexpected: list[str]  # ids found that no acknowledged write had

    @property
    def ok(self) -> bool:
        return not (self.missing or self.duplicate_ids or self.duplicate_contents or self.unexpected)

    def as_json(self) -> dict[str, Any]:
        return {
            "expected": self.expected,
            "found": self.found,
            "lost": len(self.missing),
            "duplicateIds": len(self.duplicate_ids),
            "duplicateContents": len(self.duplicate_contents),
            "unexpected": len(self.unexpected),
            "examples": {
                "lost": self.missing[:5],
                "duplicateIds": self.duplicate_ids[:5],
                "duplicateContents": self.duplicate_contents[:5],
                "unexpected": self.unexpected[:5],
            },
        }


def compare(expected: Mapping[str, str], rows: Iterable[Row]) -> Verdict:
    """Every expected id exactly once, every content exactly once, nothing else."""
    rows = list(rows)
    ids = Counter(r.id for r in rows)
    contents = Counter(r.content for r in rows)
    return Verdict(
        expected=len(expected),
        found=sum(1 for i in expected if ids[i] > 0),
        missing=sorted(i for i in expected if ids[i] == 0),
        duplicate_ids=sorted(i for i, n in ids.items() if n > 1),
        duplicate_contents=sorted(c for c, n in contents.items() if n > 1),
        unexpected=sorted(i for i in ids if i not in expected),
    )


def slot_problems(last: Mapping[tuple[str, str], str], rows: Iterable[Row]) -> list[str]:
    """Each slot: exactly one current fact, the last one acknowledged; every other one superseded."""
    problems = []
    by_slot: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if row.slot is not None:
            by_slot.setdefault(row.slot, []).append(row)
    for slot, last_id in last.items():
        mine = by_slot.get(slot, [])
        current = [r.id for r in mine if r.status == "active"]
        if current != [last_id]:
            problems.append(f"{slot}: current {current}, expected [{last_id}]")
        problems += [f"{slot}: {r.id} is {r.status}" for r in mine if r.id != last_id and r.status != "superseded"]
    return problems


# -- reading back ---------------------------------------------------------------------------


def served(http: httpx.Client, slots: Iterable[tuple[str, str]]) -> tuple[list[Row], list[Row], list[Row]]:
    """What the server serves the writer's key: every episode, every fact of each slot with its
    history, and the slots' current facts (the default listing)."""
    episodes: list[Row] = []
    cursor: str | None = None
    while True:
        page = _get(http, "/v1/episodes", {"limit": 1000, **({"cursor": cursor} if cursor else {})})
        episodes += [Row(m["id"], m["event"]["userText"], m["status"]) for m in page["episodes"]]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    facts: list[Row] = []
    current: list[Row] = []
    for subject, kind in slots:
        query = {"subjectKey": subject, "kind": kind, "limit": 1000}
        history = _get(http, "/v1/facts", {**query, "includeHistory": True})["facts"]
        facts += [_fact(m, (subject, kind)) for m in history]
        current += [_fact(m, (subject, kind)) for m in _get(http, "/v1/facts", query)["facts"]]
    return episodes, facts, current


def stored(database_url: str, tenant: str, **options: object) -> tuple[list[Row], list[Row]]:
    """Every memory row of the tenant as the store holds it (an export: duplicates would show)."""
    store = open_store(database_url, **options)
    try:
        episodes, facts = [], []
        for table, row in store.tenant(tenant).export_rows():
            if table != "memories":
                continue
            event = json.loads(row["event_json"]) if isinstance(row["event_json"], str) else row["event_json"]
            if row["source"] == "EPISODE":
                episodes.append(Row(row["memory_id"], event["userText"], row["status"]))
            else:
                facts.append(Row(row["memory_id"], event["text"], row["status"], (row["subject_key"], row["kind"])))
        return episodes, facts
    finally:
        store.close()


def audit_verdict(http: httpx.Client) -> dict[str, Any]:
    """``GET /v1/audit/verify`` (the chain, its anchors, and every memory against its digest)."""
    return _get(http, "/v1/audit/verify", {})


def _fact(memory: dict[str, Any], slot: tuple[str, str]) -> Row:
    return Row(memory["id"], memory["event"]["text"], memory["status"], slot)


def _get(http: httpx.Client, path: str, params: dict[str, Any]) -> dict[str, Any]:
    answer = http.get(path, params=params)
    answer.raise_for_status()
    result: dict[str, Any] = answer.json()
    return result
