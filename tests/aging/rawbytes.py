"""Searching storage files byte by byte: what an erasure must leave no trace in."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg


def files_holding(root: Path, needle: str) -> list[str]:
    """Return the files under ``root`` whose raw bytes contain ``needle`` (UTF-8)."""
    wanted = needle.encode()
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if not path.is_file():  # the server's socket
                continue
            try:
                data = path.read_bytes()
            except (FileNotFoundError, PermissionError):  # a temp file gone, a socket
                continue
            if wanted in data:
                found.append(str(path.relative_to(root)))
    return found


def checkpoint(admin_url: str) -> None:
    """Write every dirty page to the data files and start a fresh WAL segment, twice, so the
    segments written before the erasure fall behind the redo point and are removed."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for _ in range(2):
            conn.execute("SELECT pg_switch_wal()")
            conn.execute("CHECKPOINT")
