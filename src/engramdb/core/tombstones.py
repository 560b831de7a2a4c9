"""Value normalisation and tombstones: a corrected-away value stays refused for its slot.

Two assertions are the same value when they match after Unicode NFKC, dropping the characters
Unicode says to ignore when not shown (zero-width space and joiners, soft hyphen, word joiner,
byte order mark, variation selectors, tags: Default_Ignorable_Code_Point), NFKC again, case folding
and NFKC once more, collapsing whitespace and dropping trailing punctuation — "Prefers MongoDB." and
"prefers  mongodb" are one value; "prefers MongoDB 5" and "prefers MongoDB 6" are two. Values
that differ only in such characters are one value (a ZWJ emoji sequence and its people side by
side, two regional flags written with tags).
"""

from __future__ import annotations

import re
import unicodedata

from engramdb.contract.canonical import sha256_hex
from engramdb.storage.port import MemoryRecord, Tombstone, Transaction

_SPACE = re.compile(r"\s+")
# Unicode 15's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): they show as nothing, so
# "Paris" with one inside passed a tombstone of "Paris" (a review, session 49).
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


def normalize_value(text: str) -> str:
    """Return the normal form two equivalent assertions share."""
    # NFKC again once the ignorables are gone ("cafe" + ZWJ + U+0301 composes only then) and once
    # folded ("ß" + U+0301 folds to "ss" + U+0301, which composes): the form is then its own form.
    visible = unicodedata.normalize("NFKC", _IGNORABLE.sub("", unicodedata.normalize("NFKC", text)))
    return _spaced(unicodedata.normalize("NFKC", visible.casefold()))


def _legacy_normal(text: str) -> str:
    """The normal form of earlier releases, which kept ignorable characters: tombstones stored then hold
    its hash (they keep no text to hash again), so a value is checked against both."""
    return _spaced(unicodedata.normalize("NFKC", text).casefold())


def _spaced(folded: str) -> str:
    """Whitespace collapsed, and no trailing punctuation."""
    spaced = _SPACE.sub(" ", folded).strip()
    end = len(spaced)
    while end and (unicodedata.category(spaced[end - 1]).startswith("P") or spaced[end - 1] == " "):
        end -= 1
    return spaced[:end]


def value_hash(text: str) -> str:
    """Return the hash tombstones key a value on."""
    return sha256_hex(normalize_value(text))


def find_tombstone(tx: Transaction, scope_key: str, subject_key: str, kind: str, text: str) -> Tombstone | None:
    """The live tombstone of ``text``'s value in its slot, by today's hash or the one it was stored under."""
    today, legacy = value_hash(text), sha256_hex(_legacy_normal(text))
    found = tx.find_tombstone(scope_key, subject_key, kind, today)
    if found is None and legacy != today:
        found = tx.find_tombstone(scope_key, subject_key, kind, legacy)
    return found


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
