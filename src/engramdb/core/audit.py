"""Verifying the hash-chained audit log: recompute every link, report the first broken one."""

from __future__ import annotations

from dataclasses import dataclass

from engramdb.storage.port import GENESIS_HASH, TenantStore, chain_hash

PAGE = 1_000


@dataclass(frozen=True)
class Verdict:
    """The result of a verification: how many entries were checked and the first bad one."""

    checked: int
    broken_seq: int | None = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.broken_seq is None


def verify(tenant: TenantStore) -> Verdict:
    """Recompute the chain from the first entry; stop at the first entry that does not hold."""
    expected_seq, prev_hash, checked, after = 1, GENESIS_HASH, 0, 0
    while entries := tenant.audit_entries(after, PAGE):
        for entry in entries:
            if entry.seq != expected_seq:
                return Verdict(checked, expected_seq, f"entry {expected_seq} is missing")
            if entry.prev_hash != prev_hash:
                return Verdict(checked, entry.seq, "prevHash does not match the previous entry")
            if chain_hash(entry, seq=entry.seq, at=entry.at, prev_hash=prev_hash) != entry.hash:
                return Verdict(checked, entry.seq, "content does not match its hash (edited)")
            prev_hash, expected_seq, checked = entry.hash, expected_seq + 1, checked + 1
        after = entries[-1].seq
    return Verdict(checked)
