"""Small helpers for the model-assisted memory tests."""

from __future__ import annotations

from typing import Any

from engramdb.contract.writes import FactWrite
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.assist import DerivedItem, ExtractRequest, ExtractResult
from engramdb.models.memories import MemoryQuery
from engramdb.models.policy import TenantPolicy
from tests.factories import fact_body

ADMIN = Caller(tenant="t1", key_id="admin-key", role="admin")


def fact(subject: str, kind: str, text: str, **facts: Any) -> tuple[str, dict[str, Any]]:
    """A Brain extraction rule: when a turn says ``text``'s first words, propose this fact."""
    return text, {"subjectKey": subject, "kind": kind, "text": text, "confidence": facts.get("confidence", 0.9)}


def state(service: MemoryService, caller: Caller, fact_id: str) -> str:
    return service.reads.get_fact(caller, fact_id, MemoryQuery()).status


def stated(
    service: MemoryService,
    caller: Caller,
    text: str,
    *,
    subject: str = "user",
    kind: str = "preference",
    valid_from: str = "2026-08-18T00:00:00Z",
    source: str = "turn-1",
) -> str:
    """Write a fact the host states (trusted: current at once); return its id."""
    body = fact_body(text, subject=subject, kind=kind, validFrom=valid_from, sourceEventId=source)
    return service.writes.write_fact(caller, FactWrite.model_validate(body)).id


def extract(service: MemoryService, caller: Caller, text: str | None = None, **body: Any) -> ExtractResult:
    request = {"text": text, **body} if text is not None else body
    return service.assist.extract(caller, ExtractRequest.model_validate(request))


def item(result: ExtractResult | list[DerivedItem], text: str) -> DerivedItem:
    """The item whose text contains ``text`` (exactly one)."""
    items = result if isinstance(result, list) else result.items
    found = [i for i in items if i.text and text in i.text]
    assert len(found) == 1, [(i.action, i.text) for i in items]
    return found[0]


def derived_current(service: MemoryService) -> None:
    """A policy under which model-derived facts are current at once (no review)."""
    rule = {"status": "active", "weight": 0.5}
    trust = {t: {"derived": rule} for t in ("trusted", "mixed", "untrusted")}
    service.admin.put_policy(ADMIN, TenantPolicy.model_validate({"trust": trust}))
