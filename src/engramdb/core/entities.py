"""Entities a memory names, found without a model: names, products, places and identifiers.

Deterministic and cheap (a few compiled patterns over the text the author wrote: an episode's
summary and user text, a fact's text):

* capitalised names, one to four words ("Alice", "Acme Corp", "New York", "Flask-Login"),
  without the capitalised function words that start sentences ("The", "Can", "I'm", ...);
* mixed-case product names ("iPhone", "PostgreSQL", "GitHub") and quoted names ("Project Falcon");
* identifiers: tickets and keys ("JIRA-123", "PR #12", "#451"), versions ("v2.3.1"), and
  acronyms of two letters or more ("AWS", "CSRF");
* places: a capitalised name after in/at/from/to/near is a name like any other.

Each entity is keyed by its case-folded form, so "Acme corp" and "ACME Corp" are one. The
extractor runs on the write path (``core/entity_links.py``); a model's extraction, when one is
configured, adds its own records beside these.
"""

from __future__ import annotations

import re

MAX_ENTITIES = 24  # per memory: a long text's first ones
_NAME_WORD = r"[A-Z][\w&'.+-]*[\w+]|[A-Z]"
_NAME = re.compile(rf"\b(?:{_NAME_WORD})(?:\s+(?:of\s+|de\s+|van\s+|von\s+|&\s+)?(?:{_NAME_WORD})){{0,3}}")
_MIXED = re.compile(r"\b[a-z]+[A-Z][\w.+-]*[\w+]")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,40})[\"”]")
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)
_STARTS = re.compile(r"(?:^|[.!?:]\s+|\n\s*(?:[-*>#]+\s*|\d+[.)]\s*)?)$")
_IDENTIFIER = re.compile(r"\b[A-Z][A-Z0-9]+-\d+\b|(?<![\w#])#\d+\b|\bv\d+(?:\.\d+){1,3}\b")
# Capitalised words that start sentences or stand for the speaker, not names.
_NOT_NAMES = frozenset(
    """a about above after again all also although am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each either else even ever
    every few for from further get got had has have having he her here hers herself him himself his how
    however i i'd i'll i'm i've if in into is it it's its itself just let let's like maybe me might more
    most much must my myself no nor not now of off oh ok okay on once only or other our ours out over own
    please same she should since so some sorry still such sure than thank thanks that the their theirs
    them then there these they this those though through thus to too under until up very was we well
    were what when where whether which while who whom why will with would yes yet you your yours
    yourself great good hi hello hey right first second third next last finally step note example
    here's there's that's what's it's true false none null
    today tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday january february
    march april may june july august september october november december user assistant""".split()
)


def entity_key(name: str) -> str:
    """The key two mentions of one entity share: case-folded, inner whitespace collapsed."""
    return " ".join(name.casefold().split()).strip(".'-")


def _trimmed(name: str) -> str | None:
    """A capitalised run without the function words at its ends (None when nothing is left)."""
    words = name.split()
    while words and words[0].casefold() in _NOT_NAMES:
        words.pop(0)
    while words and words[-1].casefold() in _NOT_NAMES:
        words.pop()
    text = " ".join(words).strip(".'-")
    return text if len(text) > 1 else None


def extract(text: str) -> dict[str, str]:
    """The entities ``text`` names: key -> the first spelling seen (at most ``MAX_ENTITIES``).

    Code (fenced or inline) is skipped; a single capitalised word that starts a sentence or a
    list item ("Configure the app") counts only if the text also writes it capitalised elsewhere.
    """
    text = _CODE.sub(" ", text)
    found: dict[str, str] = {}

    def add(name: str | None) -> None:
        if name and len(found) < MAX_ENTITIES:
            key = entity_key(name)
            if len(key) > 1 and key not in _NOT_NAMES:
                found.setdefault(key, name)

    for match in _IDENTIFIER.finditer(text):
        add(match.group(0))
    for match in _QUOTED.finditer(text):
        inner = match.group(1).strip()
        if inner and len(inner.split()) <= 5 and inner[0].isalnum():
            add(inner)
    for match in _MIXED.finditer(text):
        add(match.group(0))
    initial: list[str] = []
    inside: set[str] = set()
    for match in _NAME.finditer(text):
        name = _trimmed(match.group(0))
        if name is None or (name.isupper() and " " in name):  # "CREATE TABLE": shouting, not a name
            continue
        if " " not in name and _STARTS.search(text, max(0, match.start() - 6), match.start()):
            initial.append(name)
            continue
        inside.add(entity_key(name))
        add(name)
    for name in initial:
        if entity_key(name) in inside:
            add(name)
    return found
