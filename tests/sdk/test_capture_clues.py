"""The capture rules' clues (a quick scan that decides whether a rule runs) never change what is
redacted: text built at random from secrets, command output, paths and ordinary words comes out
the same as when every rule runs on every text. A clue that were wrong would be caught (control)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from engramdb.sdk import capture
from tests.sdk.test_capture import OUTPUT_TEXTS, PATH_TEXTS, SECRET_TEXTS

FRAGMENTS = [
    *SECRET_TEXTS.values(),
    *OUTPUT_TEXTS.values(),
    *PATH_TEXTS.values(),
    "the token budget is 4096",
    "https://example.com/docs/v1/episodes",
    "postgres://user:pw@host/db",
    "password",
    "Secret",
    "~/",
    "/home/",
    "C:",
    "\\",
    "ab12CD34ef56GH78ij90KL12mn34OP56",
    "api_key=",
    " ",
    "\n",
    "We met on Tuesday to plan the launch.",
]


def _every_rule(text: str, clues: tuple[re.Pattern[str] | None, ...] | None = None) -> str:
    """What redact answers when every rule runs (or, given ``clues``, only where they are found)."""
    found: list[str] = []
    text = capture._FENCE.sub(lambda m: capture._fence(m, found), text)
    for i, (kind, pattern, template) in enumerate(capture._RULES):
        clue = None if clues is None else clues[i]
        if clue is not None and clue.search(text) is None:
            continue
        mark = f"[redacted:{kind}]"
        text = pattern.sub(template.format(mark) if template else mark, text)
    return text


texts = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_the_clues_never_change_what_is_redacted(text: str) -> None:
    assert capture.redact(text)[0] == _every_rule(text)


def test_every_clue_skips_ordinary_text_and_lets_its_rule_run_where_it_matches() -> None:
    ordinary = "We met on Tuesday to plan the launch."
    for clue in capture._CLUES:
        assert clue is None or clue.search(ordinary) is None  # the scan is spared
    for i, clue in enumerate(capture._CLUES):
        if clue is not None:  # each clued rule still redacts something of the samples
            assert any(capture._RULES[i][1].search(t) and clue.search(t) for t in FRAGMENTS), capture._RULES[i]


def test_a_wrong_clue_would_be_caught() -> None:
    wrong = tuple(re.compile("never-there") if c is not None else None for c in capture._CLUES)
    assert any(_every_rule(t, wrong) != _every_rule(t) for t in FRAGMENTS)  # the comparison can fail
