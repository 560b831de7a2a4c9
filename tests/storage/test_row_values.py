"""``row_values``: a row's values in field order, as ``dataclasses.astuple`` gives them, without its copy."""

from __future__ import annotations

from dataclasses import astuple, dataclass

from engramdb.storage.common import row_values
from engramdb.storage.rows import AuditEntry


@dataclass(frozen=True)
class _One:
    text: str


def test_a_row_gives_its_values_in_field_order() -> None:
    values = (7, "2026-12-06T00:00:00Z", "episode.write", "k1", "agent", "EPISODE", "m1", "s" * 64, None, "d")
    entry = AuditEntry(*values, None, "p" * 64, "h" * 64, reason_nonce="n")
    assert row_values(entry) == astuple(entry) and row_values(entry)[-1] == "n"
    assert row_values(_One("ab")) == ("ab",) == astuple(_One("ab"))  # one field: a tuple, not the bare value
