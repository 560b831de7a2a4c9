"""Anchoring the audit chain outside the database, so that what the chain alone cannot show shows.

The chain proves that entries link; it cannot prove that the last entries are still there, nor
that someone with write access did not rewrite entry k and re-hash everything after it (or
delete one and renumber). So the server keeps **anchors**: each tenant's chain head
``(seq, hash)``, MACed with HMAC-SHA256 under a key kept in a file beside the data (``audit.key``,
mode 0600), appended as JSON lines to ``audit-anchors/<tenant>.jsonl`` (never rewritten). The
embedding worker anchors each head it finds (every poll, 0.5 s by default) and ``engram audit
verify`` anchors the head it has just verified. Verification then requires every anchored entry
to exist with its anchored hash: a truncation, a re-hash or a renumbering that reaches an
anchored entry is caught, and one that does not reach one leaves at most the entries written
since the last anchor unprotected. An anchor also says *when* the chain ended there: an entry
after it that claims to be older (a forged entry appended and backdated to pass as old) is
caught too. No anchor file at all is a warning, not a failure: a tenant verified for the first
time has none either, and the verdict says the chain could not be anchored.

What this does not stop, said plainly: whoever holds the key *and* can write the anchor file can
write matching anchors for a forged history; whoever can replace the anchor file with an older
copy of itself can truncate back to that copy's head. Keep the file where the database's writer
cannot rewrite it (another owner, an append-only mount, ``chattr +a``) and the key likewise.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from engramdb import clock
from engramdb.core.anchor_file import Anchor, AnchorFile, append_anchor, read_anchors
from engramdb.core.audit import PAGE, AuditLog

# How much older than an anchor an entry after it may say it is: its time is taken before its
# transaction commits, and an anchor taken meanwhile does not see it yet.
CLOCK_SLACK = timedelta(seconds=60)

__all__ = ["CLOCK_SLACK", "Anchor", "AnchorCheck", "Anchors"]


@dataclass(frozen=True)
class AnchorCheck:
    """What holding a chain to its anchors found: the first entry that fails them (and why),
    what was skipped or missing (warnings), and whether any anchor held the chain at all
    (``None``: an empty chain, nothing to anchor)."""

    broken_seq: int | None = None
    problem: str | None = None
    warnings: tuple[str, ...] = ()
    anchored: bool | None = None


class Anchors:
    """The anchor files of every tenant, and the key that MACs them."""

    def __init__(self, folder: Path, key_file: Path) -> None:
        self.folder, self.key_file = folder, key_file
        self._key: bytes | None = None
        self._heads: dict[str, int] = {}  # the last seq anchored per tenant, by this process
        self._lock = threading.Lock()

    def key(self) -> bytes:
        """The MAC key, created (32 random bytes, mode 0600) the first time it is needed."""
        if self._key is None:
            if not self.key_file.exists():
                self.key_file.parent.mkdir(parents=True, exist_ok=True)
                draft = self.key_file.with_name(f".{self.key_file.name}.{secrets.token_hex(4)}")
                fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as f:
                    f.write(secrets.token_hex(32))
                try:  # a link appears whole or not at all; if another process made one first, use theirs
                    os.link(draft, self.key_file)
                except FileExistsError:
                    pass
                finally:
                    draft.unlink()
            self._key = bytes.fromhex(self.key_file.read_text().strip())
        return self._key

    def mac(self, tenant: str, seq: int, head_hash: str, at: str) -> str:
        message = json.dumps([tenant, seq, head_hash, at]).encode()
        return hmac.new(self.key(), message, hashlib.sha256).hexdigest()

    def file(self, tenant: str) -> Path:
        return self.folder / f"{tenant}.jsonl"

    def advance(self, tenant: str, log: AuditLog) -> Anchor | None:
        """Anchor ``tenant``'s current head if it moved since this process last anchored it."""
        with self._lock:
            last = self._heads.get(tenant)
            if last is None:
                known = self.read(tenant)
                last = max((a.seq for a in known), default=0)
            head = None
            while page := log.audit_entries(last, PAGE):
                head, last = page[-1], page[-1].seq
            self._heads[tenant] = last
            return None if head is None else self._append(tenant, head.seq, head.hash)

    def anchor(self, tenant: str, seq: int, head_hash: str, seen_at: str) -> Anchor | None:
        """Anchor a head verified, as seen at ``seen_at`` (an anchor says when the chain ended there:
        not when the anchor was written, which a long verification may make much later), unless the
        file already holds it or a later one."""
        with self._lock:
            known = self.read(tenant)
            if seq == 0 or any(a.seq > seq or (a.seq, a.hash) == (seq, head_hash) for a in known):
                return None
            self._heads[tenant] = max(seq, self._heads.get(tenant, 0))
            return self._append(tenant, seq, head_hash, seen_at)

    def _append(self, tenant: str, seq: int, head_hash: str, at: str | None = None) -> Anchor:
        at = at or clock.now_text()
        anchor = Anchor(seq, head_hash, at, self.mac(tenant, seq, head_hash, at))
        append_anchor(self.file(tenant), anchor)
        return anchor

    def read(self, tenant: str) -> list[Anchor]:
        """Every readable anchor of ``tenant``, in file order (none before the first anchoring)."""
        return read_anchors(self.file(tenant)).anchors

    def check(self, tenant: str, log: AuditLog) -> AnchorCheck:
        """Hold ``tenant``'s chain to its anchors: the first entry the log no longer holds as
        anchored, or that claims a time before an anchor that did not see it."""
        found = read_anchors(self.file(tenant))
        warnings = tuple(found.warnings)
        if not found.anchors:
            if not log.audit_entries(0, 1):
                return AnchorCheck(warnings=warnings)  # nothing written, nothing to anchor
            return AnchorCheck(warnings=(*warnings, _unanchored(found, self.file(tenant))), anchored=False)
        for anchor in found.anchors:
            if not hmac.compare_digest(anchor.mac, self.mac(tenant, anchor.seq, anchor.hash, anchor.at)):
                forged = f"the anchor of entry {anchor.seq} does not carry this server's MAC (forged)"
                return AnchorCheck(anchor.seq, forged, warnings, anchored=True)
        seq, problem = _held(found.anchors, log)
        if problem is None:
            seq, problem = _not_backdated(found.anchors, log)
        return AnchorCheck(seq, problem, warnings, anchored=True)


def _unanchored(found: AnchorFile, path: Path) -> str:
    why = {"missing": "there is no anchor file", "empty": "the anchor file is empty"}.get(
        found.state, "no line of the anchor file is an anchor"
    )
    return (
        f"the chain could not be anchored: {why} ({path}), so nothing outside the database holds it "
        "(expected once: a tenant's first verification; otherwise the file was removed or emptied)"
    )


def _held(anchors: list[Anchor], log: AuditLog) -> tuple[int | None, str | None]:
    """The latest anchored entry, if the log no longer holds it as anchored (the chain links
    every earlier entry to it, so one anchor held is enough)."""
    anchor = max(anchors, key=lambda a: a.seq)
    found = log.audit_entries(anchor.seq - 1, 1)
    if not found or found[0].seq != anchor.seq:
        return anchor.seq, f"entry {anchor.seq}, anchored at {anchor.at}, is gone (the log was truncated or renumbered)"
    if found[0].hash != anchor.hash:
        return anchor.seq, (
            f"entry {anchor.seq} is not the entry anchored at {anchor.at} (the chain was rewritten and re-hashed)"
        )
    return None, None


def _not_backdated(anchors: list[Anchor], log: AuditLog) -> tuple[int | None, str | None]:
    """The first entry after every anchor that says it was written before the last anchor was
    taken: the anchors say the chain was shorter then, so it was appended later (forged)."""
    last = max(anchors, key=lambda a: a.at)
    head = max(a.seq for a in anchors)
    floor = clock.to_text(clock.parse(last.at) - CLOCK_SLACK)
    after = head
    while entries := log.audit_entries(after, PAGE):
        for entry in entries:
            if _before(entry.at, floor):
                return entry.seq, (
                    f"entry {entry.seq} says it was written at {entry.at}, but the anchor taken at {last.at} "
                    f"found the chain ending at entry {last.seq}: it was appended later and backdated (forged)"
                )
        after = entries[-1].seq
    return None, None


def _before(at: str, floor: str) -> bool:
    try:
        return clock.to_text(clock.parse(at)) < floor
    except ValueError:  # the server writes only canonical times: this one was not written by it
        return True
