"""What the lexical arm indexes of a memory: its text, and for a fact its subject and kind as words.

Both backends index this body (SQLite's scope copy, PostgreSQL's ``lexical_body`` column), and a
recall's lexical evidence (core/relevance.py) is read from it, so a fact about "user.ui_theme"
matches "theme" whichever way its evidence is read.
"""

from __future__ import annotations


def lexical_text(text: str, subject_key: str | None, kind: str | None) -> str:
    """A memory's indexed body from its stored columns."""
    if subject_key:
        words = subject_key.replace(".", " ").replace(":", " ")
        return f"{text}\n{words} {kind or ''}"
    return text
