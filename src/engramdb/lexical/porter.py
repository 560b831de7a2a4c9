"""The Porter stemmer exactly as SQLite FTS5's ``porter`` tokenizer applies it.

A port of the stemmer in SQLite's ext/fts5/fts5_tokenize.c (fts5PorterCb and the functions it
calls), keeping what makes it differ from other Porter implementations, Snowball's "porter"
included:

- it works on the token's UTF-8 bytes, and leaves tokens under 3 or over 64 bytes alone;
- "*v*" (a stem containing a vowel) counts "y" as a vowel anywhere but first: "yyed" -> "y";
- step 1a turns "ies" into "ie" when the "i" is the token's first letter ("ies" -> "ie");
- a suffix matches only when something is left before it ("eed" -> "e" through "-ed");
- step 2 has Porter's published C departures: "-bli" -> "-ble" (not "-abli" -> "-able") and
  "-logi" -> "-log";
- removing a double consonant compares bytes, so it may cut a multibyte character in two, as
  FTS5 does; such a stem comes back with the lone byte escaped (surrogateescape).

``stem`` keeps a bounded process-wide cache, so stemming costs once per distinct word.
tests/core/test_lexical.py compares the stems with FTS5's own.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

MIN_BYTES, MAX_BYTES = 3, 64  # FTS5 passes shorter and longer tokens through unstemmed
CACHE_WORDS = 1 << 16  # distinct words remembered (a few MB); a miss costs a few microseconds

_VOWELS = frozenset(b"aeiou")
_Y = ord("y")
_E = ord("e")
_L = ord("l")
_S = ord("s")
_UNDOUBLED = frozenset(b"lsz")  # step 1b keeps these doubled: "falling" -> "fall"

_Condition = Callable[[bytes], bool]


def _is_vowel(c: int, y_is_vowel: bool) -> bool:
    return c in _VOWELS or (y_is_vowel and c == _Y)


def _gobble_vc(z: bytes, start: int, end: int, after_consonant: bool) -> int:
    """Return the index just past the first vowels-then-consonant in z[start:end], 0 if none."""
    consonant = after_consonant
    i = start
    while i < end:  # a vowel
        consonant = not _is_vowel(z[i], consonant)
        if not consonant:
            break
        i += 1
    i += 1
    while i < end:  # then a consonant
        consonant = not _is_vowel(z[i], consonant)
        if consonant:
            return i + 1
        i += 1
    return 0


def _m_gt0(z: bytes) -> bool:
    return _gobble_vc(z, 0, len(z), False) != 0


def _m_gt1(z: bytes) -> bool:
    n = _gobble_vc(z, 0, len(z), False)
    return n != 0 and _gobble_vc(z, n, len(z), True) != 0


def _m_eq1(z: bytes) -> bool:
    n = _gobble_vc(z, 0, len(z), False)
    return n != 0 and _gobble_vc(z, n, len(z), True) == 0


def _ends_cvc(z: bytes) -> bool:
    """Porter's *o: consonant, vowel, consonant at the end, the last not w, x or y."""
    if z[-1] in b"wxy":
        return False
    mask = 0
    consonant = False
    for c in z:
        consonant = not _is_vowel(c, consonant)
        mask = ((mask << 1) | consonant) & 0b111
    return mask == 0b101


def _m_gt1_s_or_t(z: bytes) -> bool:
    return z[-1] in b"st" and _m_gt1(z)


def _has_vowel(z: bytes) -> bool:
    """Porter's *v*, FTS5's way: "y" is a vowel anywhere but at the start."""
    return any(_is_vowel(c, i > 0) for i, c in enumerate(z))


def _always(z: bytes) -> bool:
    return True


# Each step's rules, in fts5_tokenize.c's order: the first suffix the token ends with (with at
# least one byte before it) is the step's only candidate, replaced if its stem meets the test.
_Rules = tuple[tuple[bytes, _Condition, bytes], ...]
_STEP_1B2: _Rules = ((b"at", _always, b"ate"), (b"bl", _always, b"ble"), (b"iz", _always, b"ize"))
_STEP_2: _Rules = tuple(
    (suffix.encode(), _m_gt0, out.encode())
    for suffix, out in (
        ("ational", "ate"),
        ("tional", "tion"),
        ("enci", "ence"),
        ("anci", "ance"),
        ("izer", "ize"),
        ("logi", "log"),
        ("bli", "ble"),
        ("alli", "al"),
        ("entli", "ent"),
        ("eli", "e"),
        ("ousli", "ous"),
        ("ization", "ize"),
        ("ation", "ate"),
        ("ator", "ate"),
        ("alism", "al"),
        ("iveness", "ive"),
        ("fulness", "ful"),
        ("ousness", "ous"),
        ("aliti", "al"),
        ("iviti", "ive"),
        ("biliti", "ble"),
    )
)
_STEP_3: _Rules = tuple(
    (suffix.encode(), _m_gt0, out.encode())
    for suffix, out in (
        ("ical", "ic"),
        ("ness", ""),
        ("icate", "ic"),
        ("iciti", "ic"),
        ("ful", ""),
        ("ative", ""),
        ("alize", "al"),
    )
)
_STEP_4: _Rules = tuple(
    (suffix.encode(), _m_gt1_s_or_t if suffix == "ion" else _m_gt1, b"")
    for suffix in (
        "al",
        "ance",
        "ence",
        "er",
        "ic",
        "able",
        "ible",
        "ant",
        "ement",
        "ment",
        "ent",
        "ion",
        "ou",
        "ism",
        "ate",
        "iti",
        "ous",
        "ive",
        "ize",
    )
)


def _apply(z: bytes, rules: _Rules) -> tuple[bytes, bool]:
    """Return the word after the first rule whose suffix it ends with, and whether it changed."""
    for suffix, condition, out in rules:
        if len(z) > len(suffix) and z.endswith(suffix):
            head = z[: len(z) - len(suffix)]
            return (head + out, True) if condition(head) else (z, False)
    return z, False


def _step_1a(z: bytes) -> bytes:
    n = len(z)
    if z[-1] != _S:
        return z
    if z[-2] == _E:
        if (n > 4 and z[-4] == _S and z[-3] == _S) or (n > 3 and z[-3] == ord("i")):
            return z[:-2]  # "-sses" -> "-ss", "-ies" -> "-i"
        return z[:-1]
    return z if z[-2] == _S else z[:-1]


def _step_1b(z: bytes) -> bytes:
    if len(z) > 3 and z.endswith(b"eed"):
        return z[:-1] if _m_gt0(z[:-3]) else z
    for suffix in (b"ed", b"ing"):
        if len(z) > len(suffix) and z.endswith(suffix):
            head = z[: -len(suffix)]
            return _after_1b(head) if _has_vowel(head) else z
    return z


def _after_1b(z: bytes) -> bytes:
    """Tidy a stem whose "-ed" or "-ing" went: "-at" -> "-ate", undouble, or add an "e"."""
    z, changed = _apply(z, _STEP_1B2)
    if changed:
        return z
    c = z[-1]
    # A one-byte stem here is a vowel (it passed *v*), so z[-2] is read only when it exists.
    if not _is_vowel(c, False) and c not in _UNDOUBLED and len(z) > 1 and c == z[-2]:
        return z[:-1]
    if _m_eq1(z) and _ends_cvc(z):
        return z + b"e"
    return z


def _step_5(z: bytes) -> bytes:
    if z[-1] == _E:
        head = z[:-1]
        if _m_gt1(head) or (_m_eq1(head) and not _ends_cvc(head)):
            z = head
    if len(z) > 1 and z[-1] == _L and z[-2] == _L and _m_gt1(z[:-1]):
        z = z[:-1]
    return z


@lru_cache(maxsize=CACHE_WORDS)
def stem(word: str) -> str:
    """Return the stem FTS5's porter tokenizer makes of ``word``, a token already folded."""
    z = word.encode()
    if not MIN_BYTES <= len(z) <= MAX_BYTES:
        return word
    z = _step_1b(_step_1a(z))
    if z[-1] == _Y and _has_vowel(z[:-1]):  # step 1c
        z = z[:-1] + b"i"
    for rules in (_STEP_2, _STEP_3, _STEP_4):
        z = _apply(z, rules)[0]
    return _step_5(z).decode("utf-8", "surrogateescape")
