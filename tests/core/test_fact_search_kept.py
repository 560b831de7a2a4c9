"""A ranked fact search keeps the rowids under its prefix with the scope's in-memory copy
(storage/fact_search/reads.py) on both backends: every write, new version, retraction and
unranked fact since is in the next search's answer, and a fact whose validUntil the clock has
passed is gone from it; each answer beside a control that the search still finds the rest."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from engramdb import clock
from engramdb.contract.writes import FactWrite
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.fact_search import FactSearch
from engramdb.models.lifecycle import RetractRequest
from tests.factories import fact_body, scope_fields

SCOPE = scope_fields()
UNRANKED = "store:unranked"


def _put(service: MemoryService, caller: Caller, subject: str, kind: str, text: str, **extra: Any) -> str:
    body = fact_body(json.dumps({"v": {"text": text}}), scope=SCOPE, subject=subject, kind=kind, **extra)
    return service.writes.write_fact(caller, FactWrite.model_validate(body)).id


def _ranked(service: MemoryService, caller: Caller, prefix: str = "ns:k/") -> tuple[list[str], int | None]:
    """The kinds a query search finds under ``prefix`` (unranked ones last), and its total."""
    body = {"scope": SCOPE, "subjectPrefix": prefix, "query": "apple", "limit": 100}
    page = service.fact_search.search_facts(
        caller, FactSearch.model_validate(body | {"unrankedSourceEventIds": [UNRANKED]})
    )
    return [str(f.fact.event["kind"]) for f in page.facts], page.total


def _retract(service: MemoryService, caller: Caller, fact_id: str) -> None:
    service.writes.retract_fact(caller, fact_id, RetractRequest.model_validate({"reason": "deleted", "scope": SCOPE}))


def test_the_next_search_sees_every_write_since(service: MemoryService, operator: Caller) -> None:
    ids = {f"k{i}": _put(service, operator, "ns:k/", f"k{i}", f"apple note {i}") for i in range(5)}
    assert sorted(_ranked(service, operator)[0]) == ["k0", "k1", "k2", "k3", "k4"]
    assert sorted(_ranked(service, operator)[0]) == ["k0", "k1", "k2", "k3", "k4"]  # again, as it was
    _put(service, operator, "ns:k/", "k5", "apple pie")
    found, total = _ranked(service, operator)
    assert "k5" in found and len(found) == total == 6  # a put right after is found
    _put(service, operator, "ns:k/", "k1", "apple cake")  # a new version of k1
    found, total = _ranked(service, operator)
    assert found.count("k1") == 1 and total == 6
    _retract(service, operator, ids["k2"])
    found, total = _ranked(service, operator)
    assert "k2" not in found and total == 5
    assert sorted(found) == ["k0", "k1", "k3", "k4", "k5"]  # control: the rest still found
    _put(service, operator, "ns:other/", "o1", "apple elsewhere")  # another prefix, same scope
    assert "o1" not in _ranked(service, operator)[0]
    assert "o1" in _ranked(service, operator, prefix="ns:")[0]  # control: found under its own prefix
    assert "o1" not in _ranked(service, operator)[0] and len(_ranked(service, operator)[0]) == 5


def test_unranked_facts_are_counted_as_they_come_and_go(service: MemoryService, operator: Caller) -> None:
    _put(service, operator, "ns:k/", "ranked", "apple note")
    assert _ranked(service, operator) == (["ranked"], 1)
    hidden = _put(service, operator, "ns:k/", "hidden", "apple hidden", sourceEventId=UNRANKED)
    assert _ranked(service, operator) == (["ranked", "hidden"], 2)  # the unranked one last
    _retract(service, operator, hidden)
    assert _ranked(service, operator) == (["ranked"], 1)


def test_a_fact_is_gone_once_the_clock_passes_its_valid_until(
    service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    _put(service, operator, "ns:k/", "lasting", "apple note")
    _put(service, operator, "ns:k/", "ending", "apple end", validUntil="2040-01-01T00:00:00Z")
    assert sorted(_ranked(service, operator)[0]) == ["ending", "lasting"]
    monkeypatch.setattr(clock, "utc_now", lambda: datetime(2041, 1, 1, tzinfo=UTC))
    assert _ranked(service, operator) == (["lasting"], 1)  # control: the lasting one still found
    monkeypatch.undo()  # the clock back before it ended (no job expired it): found again
    assert sorted(_ranked(service, operator)[0]) == ["ending", "lasting"]
