"""One tenant's anchor file: JSON lines, appended, never rewritten, read as a crash leaves it.

A crash (or a full disk) in the middle of an append leaves a **torn last line**: a prefix of an
anchor with no newline. Reading skips it with a warning, never an exception; appending first ends
that line, so the next anchor is a line of its own and the torn prefix stays behind as an
unreadable line (warned of, ignored). Nothing here truncates the file: it may sit on an
append-only mount (``chattr +a``), where truncating is refused.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal


@dataclass(frozen=True)
class Anchor:
    """A chain head as it was seen: its place, its hash, when, and the MAC over all three."""

    seq: int
    hash: str
    at: str
    mac: str

    def line(self) -> str:
        return json.dumps({"seq": self.seq, "hash": self.hash, "at": self.at, "mac": self.mac})


@dataclass(frozen=True)
class AnchorFile:
    """What an anchor file held: its anchors in file order, and the lines it skipped (why, as warnings)."""

    state: Literal["missing", "empty", "read"]
    anchors: list[Anchor] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_anchors(path: Path) -> AnchorFile:
    """Read an anchor file; a line that is no anchor is skipped and named in ``warnings``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return AnchorFile("missing")
    if not data.strip():
        return AnchorFile("empty")
    lines = data.split(b"\n")  # the last element is what follows the last newline: b"" unless torn
    anchors, warnings = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue  # an empty line (two writers ended a torn line at once): nothing to read
        anchor = _parse(line)
        if anchor is not None:
            anchors.append(anchor)
        elif number == len(lines):
            warnings.append(
                f"line {number} of the anchor file {path} is torn (a crash in the middle of an append?): ignored"
            )
        else:
            warnings.append(f"line {number} of the anchor file {path} is not an anchor (torn by a crash?): ignored")
    return AnchorFile("read", anchors, warnings)


def _parse(line: bytes) -> Anchor | None:
    try:
        fields = json.loads(line)
    except ValueError:  # not JSON (a prefix of a line), or not UTF-8
        return None
    if not isinstance(fields, dict) or set(fields) != {"seq", "hash", "at", "mac"}:
        return None
    seq, head, at, mac = fields["seq"], fields["hash"], fields["at"], fields["mac"]
    if type(seq) is not int or not all(isinstance(v, str) for v in (head, at, mac)):
        return None
    return Anchor(seq, head, at, mac)


def append_anchor(path: Path, anchor: Anchor) -> None:
    """Append one anchor as a line of its own, durably; a torn last line is ended first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = anchor.line().encode() + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if _ends_torn(path):
            line = b"\n" + line  # in the same write as the anchor
        while line:
            line = line[os.write(fd, line) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _ends_torn(path: Path) -> bool:
    with path.open("rb") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return False
        f.seek(size - 1)
        return f.read(1) != b"\n"
