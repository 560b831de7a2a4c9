"""A synthetic conversational corpus for the recall latency benchmark: episodes and queries.

Seeded and prefix-stable: the first ``n`` episodes of a seed are the same whatever the total, so
a larger size extends a smaller one. Seven kinds of turn (plans, preferences, work, travel,
how-to, hobbies, purchases) draw on a shared vocabulary, so queries find real matches.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Iterator
from typing import Any

from engramdb.contract.canonical import hash_scope

SCOPE: dict[str, Any] = {
    "agentId": "bench-agent",
    "profileId": "bench-profile",
    "privacyScope": "private",
    "participantScopeHash": hash_scope(["bench", "participant-1"]),
    "sandboxEligible": False,
}

NAMES = """Alice Bruno Chiara Dmitri Elena Farid Greta Hiroshi Ines Jonas Kavya Lars Mateo Nadia
Oskar Priya Quentin Rosa Samir Tomas Ulla Victor Wanjiru Ximena Yusuf Zofia Amara Benedikt Carmen
Dario Esther Felix Giulia Hamid Ingrid Javier Keiko Leon Marta Nikolai Olga Pablo Rania Stefan
Tamsin Umar Valeria Wim Yara Zeynep Anouk Bilal Colette Dagny Emeka Fiona Gustav Hana Idris""".split()

RELATIONS = """sister brother mother father manager landlord dentist coach neighbour colleague partner
cousin accountant teacher doctor mentor roommate aunt uncle grandmother plumber lawyer
physiotherapist tutor babysitter architect editor recruiter""".split()

PLACES = """Lisbon Porto Madrid Barcelona Seville Valencia Paris Lyon Marseille Bordeaux Berlin Munich
Hamburg Leipzig Vienna Zurich Geneva Basel Milan Turin Rome Naples Florence Bologna Amsterdam
Rotterdam Utrecht Brussels Antwerp Ghent Copenhagen Aarhus Stockholm Gothenburg Oslo Bergen
Helsinki Tallinn Riga Vilnius Warsaw Krakow Prague Brno Budapest Ljubljana Zagreb Split Athens
Thessaloniki Istanbul Dublin Cork Galway Edinburgh Glasgow Manchester Leeds Bristol Cardiff
Reykjavik Montreal Toronto Vancouver Boston Chicago Denver Seattle Austin Portland Nairobi
Marrakech Tunis Cairo Kyoto Osaka Seoul Taipei Hanoi Singapore Melbourne Auckland""".split()

VENUES = """Cafe-Lumen Tasca-do-Chico Bistro-Verde Ramen-Ichiraku Casa-Lola Taberna-Azul Pho-Saigon
Trattoria-Nonna Le-Petit-Zinc Mercado-Central Bar-Pintxo Sushi-Kaito Osteria-Gallo Dim-Sum-Palace
Brasserie-Nord Curry-Leaf Falafel-House Bakery-Rye Noodle-Bar-88 Taqueria-Sol""".split("\n")
VENUES = [v.replace("-", " ") for line in VENUES for v in line.split()]

OBJECTS = """dentist appointment|quarterly report|birthday dinner|car insurance renewal|sourdough
starter|marathon training plan|kitchen renovation|tax return|passport renewal|wedding invitation|
visa application|lease agreement|conference talk|job interview|piano recital|team offsite|
yoga retreat|apartment viewing|vet appointment|parent teacher meeting|budget spreadsheet|
grant proposal|book club meeting|hiking trip|moving boxes|bike repair|laptop warranty|
gym membership|phone contract|school enrolment|pension forms|mortgage application|
architecture review|release checklist|design mockups|onboarding guide|security audit|
database migration|holiday rota|photo album|garden shed|christmas presents|surprise party|
concert tickets|ferry booking|train tickets|hotel reservation|rental car|museum tour|
cooking class|language exam|driving lesson|blood test|eye exam|knee surgery|physio session|
performance review|salary negotiation|board presentation|investor update|product launch|
customer workshop|hackathon|charity run|fundraiser|art exhibition|pottery course|
wine tasting|cheese order|furniture delivery|boiler service|roof inspection|window cleaning|
electricity bill|water leak|insurance claim|parking permit|library books|guitar lessons|
swimming lessons|summer camp|science fair|graduation ceremony|family reunion|anniversary trip""".replace(
    "\n", " "
).split("|")
OBJECTS = [o.strip() for o in OBJECTS if o.strip()]

VERBS = """booked cancelled moved rescheduled recommended mentioned forgot finished started paid-for
ordered returned signed reviewed planned postponed confirmed organised approved rejected shared
drafted submitted renewed extended delayed upgraded downgraded announced""".split()
VERBS = [v.replace("-", " ") for v in VERBS]

FOODS = """ramen tapas espresso oat-milk sourdough pho falafel sushi dumplings pastel-de-nata risotto
kimchi tacos croissants matcha goulash paella bibimbap baklava pierogi curry halloumi""".split()
FOODS = [f.replace("-", " ") for f in FOODS]

HOBBIES = """climbing chess pottery cycling bouldering sailing knitting birdwatching photography
running swimming woodworking calligraphy gardening salsa tennis fencing rowing skiing surfing""".split()

TOOLS = """Python TypeScript Postgres Kubernetes Figma Notion Excel Terraform Docker Rust Django
React Jira Grafana Airflow Spark Blender Lightroom Ableton Obsidian""".split()

TASKS = [
    "rename a column",
    "set up a cron job",
    "export a report to PDF",
    "undo the last commit",
    "share a folder",
    "add a dark theme",
    "rotate the logs",
    "merge two tables",
    "create a pivot table",
    "speed up the build",
    "back up the database",
    "fix the timezone",
    "add a keyboard shortcut",
    "batch rename photos",
    "mix the vocal track",
    "split the invoice",
]

CODENAMES = """Bluebird Falcon Juniper Marigold Orion Pebble Quartz Saffron Tundra Willow Aurora
Basalt Cobalt Driftwood Ember Fjord Granite Harbor Indigo Kestrel Lantern Meadow Nimbus Opal""".split()

AIRLINES = ["TP", "LH", "BA", "AF", "KL", "IB", "SK", "AY", "OS", "LX", "UA", "AC"]
SHOPS = ["Zalando", "Decathlon", "IKEA", "Fnac", "MediaMarkt", "Etsy", "Bol", "Amazon", "Uniqlo"]
ITEMS = [
    "standing desk",
    "rain jacket",
    "coffee grinder",
    "running shoes",
    "bookshelf",
    "monitor",
    "blender",
    "tent",
    "backpack",
    "desk lamp",
    "headphones",
    "kettle",
    "office chair",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
LIKES = [
    ("love", "love", "loves"),
    ("really like", "really like", "likes"),
    ("can't stand", "can't stand", "dislikes"),
    ("am allergic to", "are allergic to", "is allergic to"),
    ("am trying to avoid", "are trying to avoid", "avoids"),
]
ACKS = [
    "Got it.",
    "Noted.",
    "Sure.",
    "Okay, I'll remember that.",
    "Thanks for letting me know.",
    "Understood.",
    "Will do.",
]


def _date(rng: random.Random) -> str:
    return rng.choice(
        [
            f"{rng.choice(WEEKDAYS)} {rng.randint(1, 28)} {rng.choice(MONTHS)}",
            f"next {rng.choice(WEEKDAYS)}",
            f"{rng.choice(MONTHS)} {rng.randint(1, 28)}",
            f"the end of {rng.choice(MONTHS)}",
            f"{rng.choice(WEEKDAYS)} at {rng.randint(7, 20)}:{rng.choice(['00', '15', '30', '45'])}",
        ]
    )


def _turn_plan(rng: random.Random) -> tuple[str, str, str]:
    name, rel, verb, obj = (rng.choice(NAMES), rng.choice(RELATIONS), rng.choice(VERBS), rng.choice(OBJECTS))
    place, date = rng.choice(PLACES), _date(rng)
    user = f"Can you remind me that my {rel} {name} {verb} the {obj} in {place} for {date}?"
    assistant = f"{rng.choice(ACKS)} {name} {verb} the {obj} in {place}; it is set for {date}."
    summary = f"User's {rel} {name} {verb} the {obj} in {place} for {date}."
    return user, assistant, summary


def _turn_preference(rng: random.Random) -> tuple[str, str, str]:
    (first, second, third), food = rng.choice(LIKES), rng.choice(FOODS)
    venue, place = rng.choice(VENUES), rng.choice(PLACES)
    user = f"I {first} {food}, and the best place for it is {venue} in {place}."
    assistant = (
        f"{rng.choice(ACKS)} You {second} {food}. Next time you are in {place} "
        f"I can suggest {venue} or somewhere similar nearby."
    )
    summary = f"User {third} {food}; mentioned {venue} in {place}."
    return user, assistant, summary


def _turn_work(rng: random.Random) -> tuple[str, str, str]:
    code, obj, name, date = (rng.choice(CODENAMES), rng.choice(OBJECTS), rng.choice(NAMES), _date(rng))
    ticket = rng.randint(100, 99999)
    user = (
        f"The {obj} for project {code} is due {date}. {name} is reviewing it and "
        f"the tracking ticket is {code.upper()}-{ticket}."
    )
    assistant = (
        f"{rng.choice(ACKS)} I'll track the {obj} for {code}: due {date}, reviewer {name}, "
        f"ticket {code.upper()}-{ticket}. Want a reminder the day before?"
    )
    summary = f"Project {code}: {obj} due {date}, reviewed by {name} (ticket {code.upper()}-{ticket})."
    return user, assistant, summary


def _turn_travel(rng: random.Random) -> tuple[str, str, str]:
    flight = f"{rng.choice(AIRLINES)}{rng.randint(100, 9999)}"
    origin, place, date = rng.choice(PLACES), rng.choice(PLACES), _date(rng)
    seat = f"{rng.randint(1, 38)}{rng.choice('ABCDEF')}"
    companion = rng.choice(NAMES)
    user = (
        f"I'm flying {flight} from {origin} to {place} on {date}, seat {seat}. "
        f"{companion} is joining me for the {rng.choice(OBJECTS)}."
    )
    assistant = (
        f"{rng.choice(ACKS)} Flight {flight} from {origin} to {place} on {date}, seat {seat}. "
        f"I'll check the weather in {place} closer to the date."
    )
    summary = f"User flies {flight} {origin} to {place} on {date} (seat {seat}) with {companion}."
    return user, assistant, summary


def _turn_howto(rng: random.Random) -> tuple[str, str, str]:
    tool, task = rng.choice(TOOLS), rng.choice(TASKS)
    user = f"How do I {task} in {tool}? I keep getting stuck on it."
    assistant = (
        f"In {tool} you can {task} from the command palette or the settings menu; "
        f"if that fails, check the {tool} docs for the {rng.choice(['beta', 'stable', 'legacy'])} "
        "version you are on."
    )
    summary = f"User asked how to {task} in {tool}."
    return user, assistant, summary


def _turn_hobby(rng: random.Random) -> tuple[str, str, str]:
    hobby, name, place = rng.choice(HOBBIES), rng.choice(NAMES), rng.choice(PLACES)
    amount = rng.randint(2, 42)
    user = (
        f"Did {amount} hours of {hobby} this month around {place}. My coach {name} says I should "
        f"focus on technique before the {rng.choice(OBJECTS)}."
    )
    assistant = f"Nice progress on {hobby}! {name}'s advice sounds right; I'll log {amount} hours."
    summary = f"User logged {amount} hours of {hobby} in {place}; coach {name} advises technique."
    return user, assistant, summary


def _turn_purchase(rng: random.Random) -> tuple[str, str, str]:
    shop, item, order = rng.choice(SHOPS), rng.choice(ITEMS), rng.randint(100000, 999999)
    problem = rng.choice(
        ["arrived damaged", "never arrived", "is the wrong size", "was charged twice", "is missing a part"]
    )
    user = f"My {shop} order {order} for the {item} {problem}. What should I do?"
    assistant = (
        f"Sorry about the {item}. Contact {shop} support with order {order}; "
        f"they usually refund or replace within {rng.randint(3, 14)} days."
    )
    summary = f"{shop} order {order} ({item}) {problem}."
    return user, assistant, summary


_TURNS = (_turn_plan, _turn_preference, _turn_work, _turn_travel, _turn_howto, _turn_hobby, _turn_purchase)


def episode_bodies(n: int, seed: int) -> Iterator[dict[str, Any]]:
    """Yield ``n`` episode write bodies (camelCase, full scope); prefix-stable for a seed.

    Sessions of 3 to 12 turns, observed over about two years before 2026-06-01, in order.
    """
    rng = random.Random(seed)
    start = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)
    step = dt.timedelta(days=730) / max(n, 1)
    session, turn, turns = 0, 0, rng.randint(3, 12)
    for i in range(n):
        if turn == turns:
            session, turn, turns = session + 1, 0, rng.randint(3, 12)
        user, assistant, summary = rng.choice(_TURNS)(rng)
        observed = start + step * i + dt.timedelta(seconds=rng.randint(0, 3600))
        yield {
            **SCOPE,
            "runtime": "custom",
            "externalSessionId": f"bench-session-{session:06d}",
            "turnIndex": turn,
            "userText": user,
            "assistantText": assistant,
            "summary": summary,
            "conversationKind": "direct",
            "visibility": "participant",
            "trustClass": "trusted" if rng.random() < 0.8 else "mixed",
            "originClass": "conversation",
            "observedAt": observed.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "provenance": "bench:synthetic",
        }
        turn += 1


Family = list[Callable[[], str]]


def queries(n: int, seed: int) -> list[str]:
    """Return ``n`` varied recall queries from the corpus vocabulary (keywords, questions, long)."""
    rng = random.Random(seed + 1_000_003)
    short, questions, long = _query_families(rng)
    out: list[str] = []
    for _ in range(n):
        roll = rng.random()
        family = short if roll < 0.3 else questions if roll < 0.8 else long
        out.append(rng.choice(family)())
    return out


def _query_families(rng: random.Random) -> tuple[Family, Family, Family]:
    """Return the short, question and long query templates, each drawing from ``rng``."""
    short = [
        lambda: f"{rng.choice(NAMES)} {rng.choice(OBJECTS)}",
        lambda: f"flight to {rng.choice(PLACES)}",
        lambda: f"{rng.choice(CODENAMES)} deadline",
        lambda: f"{rng.choice(FOODS)} {rng.choice(PLACES)}",
        lambda: f"{rng.choice(SHOPS)} order",
        lambda: f"{rng.choice(HOBBIES)} coach",
    ]
    questions = [
        lambda: f"When is my {rng.choice(RELATIONS)}'s {rng.choice(OBJECTS)}?",
        lambda: f"What did {rng.choice(NAMES)} say about the {rng.choice(OBJECTS)}?",
        lambda: f"Which restaurant in {rng.choice(PLACES)} did I like for {rng.choice(FOODS)}?",
        lambda: f"How do I {rng.choice(TASKS)} in {rng.choice(TOOLS)}?",
        lambda: f"What seat do I have on the flight to {rng.choice(PLACES)}?",
        lambda: f"Who is reviewing the {rng.choice(OBJECTS)} for project {rng.choice(CODENAMES)}?",
        lambda: f"Did my {rng.choice(SHOPS)} {rng.choice(ITEMS)} ever arrive?",
        lambda: f"Am I allergic to {rng.choice(FOODS)}?",
        lambda: f"How many hours of {rng.choice(HOBBIES)} did I do in {rng.choice(MONTHS)}?",
    ]
    long = [
        lambda: (
            f"I'm heading to {rng.choice(PLACES)} next {rng.choice(WEEKDAYS)} with "
            f"{rng.choice(NAMES)}; can you remind me what we planned there and whether the "
            f"{rng.choice(OBJECTS)} was {rng.choice(VERBS)}?"
        ),
        lambda: (
            f"My {rng.choice(RELATIONS)} asked about the {rng.choice(OBJECTS)} and the "
            f"{rng.choice(OBJECTS)} again. What do we know, and is anything due before "
            f"{rng.choice(MONTHS)}?"
        ),
        lambda: (
            f"Before the {rng.choice(OBJECTS)} for {rng.choice(CODENAMES)} I want to eat "
            f"{rng.choice(FOODS)} somewhere good in {rng.choice(PLACES)}; any place I liked?"
        ),
    ]
    return short, questions, long
