"""What ``engram bench assist`` writes and asks: short first-person turns about activities, places
and employers (one or two facts a turn for the scripted model to propose), stated facts for the
judgement to find as neighbours, and recall questions about the activities."""

from __future__ import annotations

import random
from typing import Any

from engramdb import clock

ACTIVITIES = [
    "hiking",
    "chess",
    "jazz",
    "kayaking",
    "pottery",
    "sailing",
    "tennis",
    "baking",
    "climbing",
    "opera",
    "cycling",
    "poetry",
    "gardening",
    "skiing",
    "surfing",
    "knitting",
    "running",
    "painting",
    "rowing",
    "fencing",
]
PLACES = [
    "Lisbon",
    "Porto",
    "Madrid",
    "Berlin",
    "Vienna",
    "Prague",
    "Oslo",
    "Dublin",
    "Milan",
    "Lyon",
    "Ghent",
    "Krakow",
    "Riga",
    "Tallinn",
    "Bergen",
    "Turin",
    "Seville",
    "Utrecht",
    "Bruges",
    "Salzburg",
]
ORGS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Wonka", "Tyrell"]


def turn(rng: random.Random, index: int, session: str) -> dict[str, Any]:
    """An episode body: turn ``index`` of ``session``, two facts about the user."""
    text = (
        f"I like {rng.choice(ACTIVITIES)} in {rng.choice(PLACES)}. I work at {rng.choice(ORGS)} {rng.choice(PLACES)}."
    )
    return {
        "runtime": "custom",
        "externalSessionId": session,
        "turnIndex": index,
        "userText": text,
        "assistantText": "Noted.",
        "summary": text,
        "conversationKind": "direct",
        "visibility": "participant",
        "trustClass": "mixed",
        "originClass": "conversation",
        "observedAt": clock.now_text(),
        "provenance": "bench",
    }


def fact(rng: random.Random, index: int) -> dict[str, Any]:
    """A stated fact body: the user likes an activity somewhere (multi-valued: every one stays current)."""
    return {
        "runtime": "custom",
        "text": f"The user likes {rng.choice(ACTIVITIES)} in {rng.choice(PLACES)} ({index}).",
        "kind": "likes",
        "subjectKey": "user",
        "confidence": 0.9,
        "sourceEventId": f"seed-{index}",
        "validFrom": clock.now_text(),
        "visibility": "participant",
        "trustClass": "trusted",
        "provenance": "bench",
    }


def query(rng: random.Random) -> str:
    """A recall question about one of the activities."""
    return f"where does the user like {rng.choice(ACTIVITIES)}?"
