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
since the last anchor unprotected.

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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engramdb import clock
from engramdb.core.audit import PAGE, AuditLog


@dataclass(frozen=True)
class Anchor:
    """A chain head as it was seen: its place, its hash, when, and the MAC over all three."""

    seq: int
    hash: str
    at: str
    mac: str


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
                last = known[-1].seq if known else 0
            head = None
            while page := log.audit_entries(last, PAGE):
                head, last = page[-1], page[-1].seq
            self._heads[tenant] = last
            if head is None:
                return None
            at = clock.now_text()
            anchor = Anchor(head.seq, head.hash, at, self.mac(tenant, head.seq, head.hash, at))
            self.folder.mkdir(parents=True, exist_ok=True)
            with self.file(tenant).open("a", encoding="utf-8") as f:
                f.write(json.dumps({"seq": anchor.seq, "hash": anchor.hash, "at": anchor.at, "mac": anchor.mac}) + "\n")
            return anchor

    def read(self, tenant: str) -> list[Anchor]:
        """Every anchor of ``tenant``, oldest first (none before the first anchoring)."""
        path = self.file(tenant)
        if not path.exists():
            return []
        lines = path.read_text(encoding="utf-8").splitlines()
        return [Anchor(**json.loads(line)) for line in lines if line.strip()]

    def check(self, tenant: str, log: AuditLog) -> tuple[int | None, str | None]:
        """The first anchored entry the log no longer holds as anchored, and what is wrong."""
        anchors = self.read(tenant)
        for anchor in anchors:
            if not hmac.compare_digest(anchor.mac, self.mac(tenant, anchor.seq, anchor.hash, anchor.at)):
                return anchor.seq, f"the anchor of entry {anchor.seq} does not carry this server's MAC (forged)"
        for anchor in _latest_first(anchors):
            found = log.audit_entries(anchor.seq - 1, 1)
            if not found or found[0].seq != anchor.seq:
                return anchor.seq, (
                    f"entry {anchor.seq}, anchored at {anchor.at}, is gone (the log was truncated or renumbered)"
                )
            if found[0].hash != anchor.hash:
                return anchor.seq, (
                    f"entry {anchor.seq} is not the entry anchored at {anchor.at} "
                    "(the chain was rewritten and re-hashed)"
                )
            break  # the chain links every earlier entry to this one, so one anchor held is enough
        return None, None


def _latest_first(anchors: Sequence[Anchor]) -> list[Anchor]:
    return sorted(anchors, key=lambda a: a.seq, reverse=True)
