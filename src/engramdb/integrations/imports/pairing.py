"""Messages, in order, made into turns: a user message and the assistant's answers after it.

Two user messages before an answer are one turn's words; an answer with no user message before it
is a turn of its own; a ``text`` item (a note, a document) is a turn of its own; a user message
with no answer at the end is left out (it is not a finished turn yet: a later import takes it
with its answer, under the same id).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from engramdb.integrations.imports.turns import ImportedTurn, Reading

Said = tuple[str, Mapping[str, Any]]  # a message's text and the record it came from
MakeTurn = Callable[[int, str, str, Mapping[str, Any]], ImportedTurn]  # (index, user, answer, first record)


class Pairing:
    """A session's messages, turned into turns as they come."""

    def __init__(self, reading: Reading, make: MakeTurn) -> None:
        self.reading, self.make, self.index = reading, make, 0
        self.user: list[Said] = []
        self.answers: list[Said] = []

    def add(self, kind: str, text: str, record: Mapping[str, Any]) -> None:
        """Take a message: ``user``, ``assistant`` or ``text``."""
        if kind == "assistant":
            self.answers.append((text, record))
            return
        if kind == "text" or self.answers:
            self.flush()
        self.user.append((text, record))
        if kind == "text":
            self.flush()

    def flush(self) -> None:
        if not self.user and not self.answers:
            return
        first = (self.user or self.answers)[0][1]
        said, answered = ("\n\n".join(t for t, _ in part) for part in (self.user, self.answers))
        self.reading.turns.append(self.make(self.index, said, answered, first))
        self.index, self.user, self.answers = self.index + 1, [], []

    def end(self) -> None:
        if self.user and not self.answers:
            self.reading.skipped["a user message with no answer yet"] += 1
            return
        self.flush()
