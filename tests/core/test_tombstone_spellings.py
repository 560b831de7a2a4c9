"""Characters Unicode ignores when not shown make no new value, wherever they sit, and a tombstone
stored under the earlier normal form (which kept them) still refuses the spelling it was made for."""

from __future__ import annotations

import unicodedata
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engramdb.contract.canonical import sha256_hex
from engramdb.contract.writes import FactWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.core.tombstones import _legacy_normal, normalize_value, value_hash
from engramdb.errors import ConflictError
from engramdb.models.memories import WriteResponse
from tests.factories import fact_body, scope_fields

IGNORABLE = ["\u00ad", "\u034f", "\u115f", "\u17b4", "\u180b", "\u200b", "\u200d", "\u2060", "\ufe00", "\ufeff"]
IGNORABLE += ["\U000e0100", "\U000e0067"]
MINE = scope_fields()


@settings(max_examples=300, derandomize=True)
@given(
    st.text(alphabet="abcé", min_size=1, max_size=12),
    st.lists(st.tuples(st.integers(0, 12), st.sampled_from(IGNORABLE))),
)
def test_an_ignorable_anywhere_makes_no_new_value(word: str, inserted: list[tuple[int, str]]) -> None:
    spelled = word
    for at, char in inserted:
        spelled = spelled[:at] + char + spelled[at:]
    assert value_hash(f"Lives in {spelled}") == value_hash(f"Lives in {word}")


@settings(max_examples=300, derandomize=True)
@given(st.text(alphabet=["c", "a", "f", "e", "\u0301", "\u0308", "ß", "ﬁ", "\u0345", *IGNORABLE], max_size=20))
def test_normalisation_is_idempotent_with_ignorables_and_marks(text: str) -> None:
    assert normalize_value(normalize_value(text)) == normalize_value(text)


def test_a_mark_after_an_ignorable_composes() -> None:
    assert normalize_value("Lives in cafe\u200d\u0301") == normalize_value("Lives in café")
    assert unicodedata.normalize("NFC", "cafe\u0301") == "café"  # the control: the mark composes alone


def _write(service: MemoryService, caller: Caller, text: str, source: str) -> WriteResponse:
    body = fact_body(text, subject="user", kind="home", sourceEventId=source, scope=MINE)
    return service.writes.write_fact(caller, FactWrite.model_validate(body))


def test_a_tombstone_under_the_earlier_hash_still_refuses_its_spelling(
    service: MemoryService, operator: Caller
) -> None:
    paris = "Lives in Pa\u200bris"
    _write(service, operator, paris, "s1")
    _write(service, operator, "Lives in Berlin", "s2")  # Paris is corrected away
    tenant = service.shared.store.tenant("t1")
    scope_key = auth.scope_key(service.shared.scope(operator, MINE))
    [tomb] = tenant.tombstones(scope_key, subject_key="user", kind="home", include_lifted=False)
    with tenant.transaction() as tx:  # as an earlier release stored it: the hash kept the ignorable
        tx.lift_tombstone(tomb.tombstone_id, at=tomb.created_at, by="test", reason="stored again, the old way")
        tx.add_tombstone(replace(tomb, tombstone_id="legacy", value_hash=sha256_hex(_legacy_normal(paris))))
    assert sha256_hex(_legacy_normal(paris)) != value_hash(paris)
    with pytest.raises(ConflictError):
        _write(service, operator, paris, "s3")
    assert _write(service, operator, "Lives in Rome", "s4").outcome == "superseded"  # the control
