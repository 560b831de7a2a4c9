"""Stored times are canonical text of one width, so comparing them as text orders them in time."""

from __future__ import annotations

from engramdb import clock


def test_canonical_text_is_fixed_width_and_sorts_in_time_order() -> None:
    moments = [
        "0001-01-01T00:00:00Z",
        "0999-12-31T23:59:59Z",
        "1000-01-01T00:00:00Z",
        "2026-08-18T05:30:00+05:30",
        "2026-08-18T00:00:00.5Z",
        "9999-12-31T23:59:59Z",
    ]
    texts = [clock.normalize(m) for m in moments]
    assert texts[1] == "0999-12-31T23:59:59.000000Z" and texts[3] == "2026-08-18T00:00:00.000000Z"
    assert {len(t) for t in texts} == {27}
    assert sorted(texts) == sorted(texts, key=clock.parse) == texts
    assert [clock.normalize(t) for t in texts] == texts  # canonical text parses back to itself
