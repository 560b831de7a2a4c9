"""How much a SQLite statement reads, as a count that does not depend on the machine: its virtual
machine's steps (a progress handler called at each), on a connection of the test's own."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def vm_steps(path: Path, statements: Sequence[tuple[str, Sequence[Any]]]) -> int:
    """The steps the statements take, run again on the file at ``path`` (each read to its end)."""
    steps = 0

    def tick() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn = sqlite3.connect(path)
    try:
        conn.set_progress_handler(tick, 1)
        for sql, params in statements:
            conn.execute(sql, list(params)).fetchall()
    finally:
        conn.close()
    return steps
