"""Value normalisation and tombstones: a corrected-away value stays refused for its slot.

Two assertions are the same value when they match after Unicode NFKC, dropping invisible format
characters (zero-width space, soft hyphen, word joiner, byte order mark: Unicode's Cf), case
folding, collapsing whitespace and dropping trailing punctuation — "Prefers MongoDB." and
"prefers  mongodb" are one value; "prefers MongoDB 5" and "prefers MongoDB 6" are two.
"""

from __future__ import annotations

import re
import unicodedata

from engramdb.contract.canonical import sha256_hex
from engramdb.storage.port import MemoryRecord, Tombstone

_SPACE = re.compile(r"\s+")


def normalize_value(text: str) -> str:
    """Return the normal form two equivalent assertions share."""
    # Format characters show as nothing: "Paris\u200b" passed a tombstone of "Paris" (a review).
    visible = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    folded = _SPACE.sub(" ", visible.casefold()).strip()
    end = len(folded)
    while end and (unicodedata.category(folded[end - 1]).startswith("P") or folded[end - 1] == " "):
        end -= 1
    return folded[:end]


def value_hash(text: str) -> str:
    """Return the hash tombstones key a value on."""
    return sha256_hex(normalize_value(text))


def tombstone_for(fact: MemoryRecord, *, reason: str | None, at: str, actor_key_id: str | None) -> Tombstone:
    """Return the tombstone of a fact's value in its slot."""
    digest = value_hash(fact.text)
    assert fact.subject_key is not None and fact.kind is not None
    return Tombstone(
        tombstone_id=sha256_hex(f"{fact.scope_key}\x1f{fact.subject_key}\x1f{fact.kind}\x1f{digest}\x1f{at}")[:32],
        scope_key=fact.scope_key,
        subject_key=fact.subject_key,
        kind=fact.kind,
        value_hash=digest,
        fact_id=fact.memory_id,
        reason=reason,
        created_at=at,
        actor_key_id=actor_key_id,
    )
