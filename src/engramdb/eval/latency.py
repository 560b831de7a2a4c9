"""Recall latency benchmark: server-side recall time of one large scope, by scope size.

What it does, per ``size``:

1. writes ``size`` synthetic conversational episodes into ONE scope of a fresh tenant through
   the production bulk path (``MemoryService.write_episodes``, batches of ``batch_size``);
2. gives every row a vector through the tenant store's ``save_embeddings`` (the same call the
   embedding worker makes), either embedding every text with the real embedder (``full``) or,
   when that would take longer than ``full_embed_budget_s``, reusing a pool of real embeddings
   (``pool``, see :func:`_pool_vectors`);
3. reopens the store (empty vector cache), runs one warm-up query (it loads the scope's vectors:
   reported as the cold load) and then ``queries`` seeded queries through ``MemoryService.recall``,
   keeping ``timings["searchMs"]`` (everything after the query embedding: both arms, fusion,
   record fetch, features) and ``timings["embedMs"]`` separately.

Before the sizes, ``ingest_sample`` episodes are written and drained through the embedding job
with the real embedder to measure end-to-end ingest throughput; their vectors form the pool.
"""

from __future__ import annotations

import cProfile
import datetime as dt
import io
import os
import platform
import pstats
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engramdb import __version__, clock
from engramdb.config import Settings
from engramdb.contract.canonical import hash_scope
from engramdb.contract.events import EpisodeWrite, Scope
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import Embedder, FloatMatrix, l2_normalize, make_embedder
from engramdb.core.service import MemoryService
from engramdb.errors import EngramError
from engramdb.eval import lifecycle_cost
from engramdb.jobs.embedding import drain
from engramdb.models.api import RecallRequest
from engramdb.storage.port import Candidate, CandidateFilter, MemoryRecord, Vector
from engramdb.storage.sqlite.store import SQLiteStore

Progress = Callable[[str], None]

SCOPE: dict[str, Any] = {
    "agentId": "bench-agent",
    "profileId": "bench-profile",
    "privacyScope": "private",
    "participantScopeHash": hash_scope(["bench", "participant-1"]),
    "sandboxEligible": False,
}

# --------------------------------------------------------------------------------------------
# Synthetic corpus
# --------------------------------------------------------------------------------------------

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
    "rename a column", "set up a cron job", "export a report to PDF", "undo the last commit",
    "share a folder", "add a dark theme", "rotate the logs", "merge two tables",
    "create a pivot table", "speed up the build", "back up the database", "fix the timezone",
    "add a keyboard shortcut", "batch rename photos", "mix the vocal track", "split the invoice",
]

CODENAMES = """Bluebird Falcon Juniper Marigold Orion Pebble Quartz Saffron Tundra Willow Aurora
Basalt Cobalt Driftwood Ember Fjord Granite Harbor Indigo Kestrel Lantern Meadow Nimbus Opal""".split()

AIRLINES = ["TP", "LH", "BA", "AF", "KL", "IB", "SK", "AY", "OS", "LX", "UA", "AC"]
SHOPS = ["Zalando", "Decathlon", "IKEA", "Fnac", "MediaMarkt", "Etsy", "Bol", "Amazon", "Uniqlo"]
ITEMS = ["standing desk", "rain jacket", "coffee grinder", "running shoes", "bookshelf", "monitor",
         "blender", "tent", "backpack", "desk lamp", "headphones", "kettle", "office chair"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
LIKES = [("love", "love", "loves"), ("really like", "really like", "likes"),
         ("can't stand", "can't stand", "dislikes"), ("am allergic to", "are allergic to",
         "is allergic to"), ("am trying to avoid", "are trying to avoid", "avoids")]  # fmt: skip
ACKS = ["Got it.", "Noted.", "Sure.", "Okay, I'll remember that.", "Thanks for letting me know.",
        "Understood.", "Will do."]


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
    name, rel, verb, obj = (rng.choice(NAMES), rng.choice(RELATIONS), rng.choice(VERBS),
                            rng.choice(OBJECTS))  # fmt: skip
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
    code, obj, name, date = (rng.choice(CODENAMES), rng.choice(OBJECTS), rng.choice(NAMES),
                             _date(rng))  # fmt: skip
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
    problem = rng.choice(["arrived damaged", "never arrived", "is the wrong size",
                          "was charged twice", "is missing a part"])  # fmt: skip
    user = f"My {shop} order {order} for the {item} {problem}. What should I do?"
    assistant = (
        f"Sorry about the {item}. Contact {shop} support with order {order}; "
        f"they usually refund or replace within {rng.randint(3, 14)} days."
    )
    summary = f"{shop} order {order} ({item}) {problem}."
    return user, assistant, summary


_TURNS = (_turn_plan, _turn_preference, _turn_work, _turn_travel, _turn_howto, _turn_hobby,
          _turn_purchase)  # fmt: skip


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


def queries(n: int, seed: int) -> list[str]:
    """Return ``n`` varied recall queries from the corpus vocabulary (keywords, questions, long)."""
    rng = random.Random(seed + 1_000_003)
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
    out: list[str] = []
    for _ in range(n):
        roll = rng.random()
        family = short if roll < 0.3 else questions if roll < 0.8 else long
        out.append(rng.choice(family)())
    return out


# --------------------------------------------------------------------------------------------
# Benchmark
# --------------------------------------------------------------------------------------------


@dataclass
class BenchConfig:
    """Options of ``engram bench recall``."""

    sizes: Sequence[int] = (1_000, 10_000, 100_000)
    queries: int = 200
    embedder: str = "minilm"
    home: Path | None = None
    ingest_sample: int = 2_000
    batch_size: int = 500
    seed: int = 7
    vectors: str = "auto"  # auto | full | pool
    full_embed_budget_s: float = 60.0
    pool_noise: float = 0.35
    limit: int = 8
    profile_dir: Path | None = None


class RecordingEmbedder:
    """Delegates to an embedder and keeps every text's vector (the pool of real embeddings)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.vectors: dict[str, np.ndarray] = {}

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        out = self.inner.embed(texts)
        for text, vector in zip(texts, out, strict=True):
            self.vectors[text] = vector
        return out


class _Clock:
    """Wall and this-thread CPU time of a block, in ms, written into ``into[name + 'Ms']``.

    Thread CPU time is not inflated by waiting for a core, so on a busy machine it shows the
    intrinsic cost of single-threaded work (SQLite, Python); it misses BLAS helper threads.
    """

    def __init__(self, into: dict[str, float], name: str) -> None:
        self.into, self.name = into, name

    def __enter__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.thread_time()

    def __exit__(self, *exc: object) -> None:
        self.into[f"{self.name}Ms"] = (time.perf_counter() - self.wall) * 1000
        self.into[f"{self.name}CpuMs"] = (time.thread_time() - self.cpu) * 1000


class _TimedEmbedder:
    """Wraps the query embedder to know the CPU time the embedding took."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.last: dict[str, float] = {}

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        with _Clock(self.last, "embedWrapped"):
            return self._inner.embed(texts)


class _TimedTenant:
    """Wraps a tenant store to time the storage calls recall makes (a few µs of cost)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.last: dict[str, float] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @contextmanager
    def reading(self) -> Iterator[_TimedTenant]:
        self.last["neighboursMs"] = 0.0  # one recall asks for neighbours once or twice
        with self._inner.reading():  # recall reads through this wrapper, not the store it yields
            yield self

    def adjacent(self, *args: Any, **kwargs: Any) -> tuple[np.ndarray, np.ndarray]:
        started = time.perf_counter()
        result: tuple[np.ndarray, np.ndarray] = self._inner.adjacent(*args, **kwargs)
        self.last["neighboursMs"] = self.last.get("neighboursMs", 0.0) + (time.perf_counter() - started) * 1000
        return result

    def vector_candidates(self, *args: Any, **kwargs: Any) -> list[Candidate]:
        with _Clock(self.last, "dense"):
            result: list[Candidate] = self._inner.vector_candidates(*args, **kwargs)
        self.last["denseHits"] = len(result)
        return result

    def text_candidates(self, *args: Any, **kwargs: Any) -> list[Candidate]:
        with _Clock(self.last, "lexical"):
            result: list[Candidate] = self._inner.text_candidates(*args, **kwargs)
        self.last["lexicalHits"] = len(result)
        return result

    def candidates(
        self, scope_key: str, query: Vector, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> tuple[list[Candidate], list[Candidate]]:
        """As the SQLite store answers it (one arm after the other), each arm timed."""
        return (self.vector_candidates(scope_key, query, filt, limit),
                self.text_candidates(scope_key, terms, filt, limit))  # fmt: skip

    def records(self, rowids: Sequence[int], **kwargs: Any) -> dict[int, MemoryRecord]:
        with _Clock(self.last, "records"):
            result: dict[int, MemoryRecord] = self._inner.records(rowids, **kwargs)
        self.last["records"] = len(result)
        return result


class _TimedStore:
    def __init__(self, inner: SQLiteStore) -> None:
        self._inner = inner
        self._tenants: dict[str, _TimedTenant] = {}

    def tenant(self, name: str, *, create: bool = False) -> _TimedTenant:
        if name not in self._tenants:
            self._tenants[name] = _TimedTenant(self._inner.tenant(name, create=create))
        return self._tenants[name]

    def tenant_names(self) -> list[str]:
        return self._inner.tenant_names()

    def close(self) -> None:
        self._inner.close()


def percentiles(values: Sequence[float], points: Sequence[int] = (50, 95, 99)) -> dict[str, float]:
    """Return ``{"p50": .., "p95": .., "p99": .., "mean": .., "max": ..}`` rounded to µs."""
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        return {}
    out = {f"p{p}": round(float(np.percentile(array, p)), 3) for p in points}
    out["mean"] = round(float(array.mean()), 3)
    out["max"] = round(float(array.max()), 3)
    return out


_THREAD_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def load_average() -> list[float] | None:
    """Return the 1, 5 and 15 minute load averages (other work on the machine skews latency)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def source_info() -> dict[str, Any] | None:
    """Return the git commit and uncommitted files of the source tree, if it is a checkout."""
    import subprocess

    import engramdb

    root = Path(engramdb.__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()  # fmt: skip
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "src"],
                                capture_output=True, text=True, timeout=10, check=True).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "uncommitted": [line[3:] for line in status.splitlines()]}


def machine_info() -> dict[str, Any]:
    """Return what the numbers depend on: CPUs, Python, platform, library versions."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    info: dict[str, Any] = {
        "cpuCount": os.cpu_count(),
        "cpusUsable": usable,
        "cpuModel": model,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
        "engramdb": __version__,
        "threadEnv": {k: os.environ[k] for k in _THREAD_ENV if k in os.environ},
    }
    try:
        import onnxruntime

        info["onnxruntime"] = onnxruntime.__version__
    except ImportError:
        pass
    return info


@dataclass
class _Run:
    config: BenchConfig
    home: Path
    settings: Settings
    embedder: RecordingEmbedder
    progress: Progress


def run(config: BenchConfig, progress: Progress = lambda _: None) -> dict[str, Any]:
    """Run the benchmark and return the JSON-ready result."""
    if not config.sizes or min(config.sizes) < 1:
        raise EngramError("sizes must be positive integers", field="--sizes")
    if config.queries < 1 or config.ingest_sample < 1:
        raise EngramError("--queries and --ingest-sample must be at least 1")
    if config.vectors not in ("auto", "full", "pool"):
        raise EngramError("--vectors must be auto, full or pool", field="--vectors")
    temporary = config.home is None
    home = Path(tempfile.mkdtemp(prefix="engram-bench-")) if temporary else Path(config.home)  # type: ignore[arg-type]
    home.mkdir(parents=True, exist_ok=True)
    settings = Settings(home=home, embedder=config.embedder)
    embedder = RecordingEmbedder(make_embedder(config.embedder))
    state = _Run(config, home, settings, embedder, progress)
    started, load_at_start = time.perf_counter(), load_average()
    try:
        progress(f"data folder: {home}{' (temporary)' if temporary else ''}")
        ingest = _measure_ingest(state)
        results = [_measure_size(state, size, ingest["embedEpisodesPerSec"]) for size in config.sizes]
    finally:
        if temporary:
            shutil.rmtree(home, ignore_errors=True)
    return {
        "benchmark": "recall_latency",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_info(),
        "source": source_info(),
        "config": {
            "sizes": list(config.sizes),
            "queries": config.queries,
            "embedder": config.embedder,
            "embedderModel": embedder.model_id,
            "ingestSample": config.ingest_sample,
            "batchSize": config.batch_size,
            "seed": config.seed,
            "vectors": config.vectors,
            "fullEmbedBudgetSeconds": config.full_embed_budget_s,
            "poolNoise": config.pool_noise,
            "limit": config.limit,
            "retrieval": settings.retrieval.model_dump(),
            "home": None if temporary else str(home),
        },
        "ingest": ingest,
        "results": results,
        "targets": _targets(results),
        "totalSeconds": round(time.perf_counter() - started, 1),
        "loadAverage": {"start": load_at_start, "end": load_average()},
    }


def _targets(results: list[dict[str, Any]]) -> dict[str, Any]:
    target: dict[str, Any] = {"size": 10_000, "p50Ms": 10.0, "p99Ms": 30.0, "measured": False}
    for result in results:
        if result["size"] == 10_000:
            search = result["searchMs"]
            target.update(measured=True, p50Met=search["p50"] <= 10.0, p99Met=search["p99"] <= 30.0)
    return target


def _write(service: MemoryService, caller: Caller, bodies: list[dict[str, Any]]) -> int:
    writes = [EpisodeWrite.model_validate(body) for body in bodies]
    responses = service.write_episodes(caller, writes)
    return sum(1 for r in responses if r.created)


def _ingest(
    state: _Run, service: MemoryService, tenant: str, n: int, label: str
) -> tuple[float, int]:
    """Write ``n`` corpus episodes through ``write_episodes``; return (seconds, created)."""
    caller = Caller(tenant=tenant, key_id="bench", role="admin")
    size = state.config.batch_size
    created, batch, seconds = 0, [], 0.0
    last_report = time.perf_counter()
    for body in episode_bodies(n, state.config.seed):
        batch.append(body)
        if len(batch) == size:
            t0 = time.perf_counter()
            created += _write(service, caller, batch)
            seconds += time.perf_counter() - t0
            batch = []
            if time.perf_counter() - last_report > 10:
                state.progress(f"  {label}: wrote {created:,}/{n:,}")
                last_report = time.perf_counter()
    if batch:
        t0 = time.perf_counter()
        created += _write(service, caller, batch)
        seconds += time.perf_counter() - t0
    return seconds, created


def _measure_ingest(state: _Run) -> dict[str, Any]:
    """End-to-end ingest throughput: bulk writes, then the embedding job drains every row."""
    n = state.config.ingest_sample
    folder = state.home / "ingest-sample"
    shutil.rmtree(folder, ignore_errors=True)
    store = SQLiteStore(folder, synchronous=state.settings.sqlite_synchronous)
    try:
        store.tenant("ingest", create=True)
        service = MemoryService(store, state.embedder, state.settings)
        state.progress(f"ingest sample: {n:,} episodes with {state.embedder.model_id}")
        state.embedder.inner.embed(["load the model before timing"])  # not part of the pool
        write_s, created = _ingest(state, service, "ingest", n, "ingest sample")
        t0 = time.perf_counter()
        drained = drain(store.tenant("ingest"), state.embedder, state.settings.embed_batch_size)
        embed_s = time.perf_counter() - t0
        counts = store.tenant("ingest").embedding_counts()
    finally:
        store.close()
        shutil.rmtree(folder, ignore_errors=True)
    if created != n or counts["ready"] != n:
        raise EngramError(f"ingest sample: created {created}, ready {counts['ready']} of {n}")
    result = {
        "episodes": n,
        "embedder": state.embedder.model_id,
        "writeBatch": state.config.batch_size,
        "embedBatch": state.settings.embed_batch_size,
        "writeSeconds": round(write_s, 3),
        "embedSeconds": round(embed_s, 3),
        "drained": drained,
        "writeEpisodesPerSec": round(n / write_s, 1),
        "embedEpisodesPerSec": round(n / embed_s, 1),
        "endToEndEpisodesPerSec": round(n / (write_s + embed_s), 1),
    }
    state.progress(
        f"  ingest: write {result['writeEpisodesPerSec']:,}/s, embed "
        f"{result['embedEpisodesPerSec']:,}/s, end to end {result['endToEndEpisodesPerSec']:,}/s"
    )
    return result


def _vector_mode(state: _Run, size: int, embed_rate: float) -> str:
    if state.config.vectors != "auto":
        return state.config.vectors
    # The first ``ingest_sample`` texts of the corpus are already embedded (same seed).
    to_embed = max(0, size - state.config.ingest_sample)
    return "full" if to_embed / embed_rate <= state.config.full_embed_budget_s else "pool"


def _measure_size(state: _Run, size: int, embed_rate: float) -> dict[str, Any]:
    mode = _vector_mode(state, size, embed_rate)
    model = state.embedder.model_id
    name = f"recall-{size}-s{state.config.seed}-{state.config.embedder.split(':')[0]}-{mode}"
    state.progress(f"size {size:,}: tenant {name}, vectors: {mode}")
    store = SQLiteStore(state.home, synchronous=state.settings.sqlite_synchronous)
    fill: dict[str, Any] = {"mode": mode}
    write_s: float | None = None
    try:
        exists = name in store.tenant_names()
        tenant = store.tenant(name, create=True)
        counts = tenant.embedding_counts()
        if exists and counts == {"pending": 0, "ready": size, "failed": 0}:
            state.progress("  reusing the existing tenant (same size, seed and vector mode)")
            fill["reused"] = True
        elif exists and sum(counts.values()):
            raise EngramError(f"tenant {name} in {state.home} holds other data; use a fresh --home")
        else:
            service = MemoryService(store, state.embedder, state.settings)
            write_s, created = _ingest(state, service, name, size, f"size {size:,}")
            if created != size:
                raise EngramError(f"size {size}: only {created} episodes were new")
            state.progress(f"  wrote {size:,} episodes in {write_s:.1f} s; filling vectors")
            t0 = time.perf_counter()
            fill.update(_fill_vectors(state, tenant, mode, model))
            fill["seconds"] = round(time.perf_counter() - t0, 2)
    finally:
        store.close()
    latency = _measure_latency(state, name, size)
    latency["lifecycleFilters"] = _measure_lifecycle(state, name)
    return {
        "size": size,
        "tenant": name,
        "vectors": fill,
        "writeSeconds": None if write_s is None else round(write_s, 2),
        "writeEpisodesPerSec": None if write_s is None else round(size / write_s, 1),
        **latency,
    }


def _measure_lifecycle(state: _Run, name: str) -> dict[str, Any]:
    """Recall with and without the lifecycle filters (the bench tenant is retired in part)."""
    store = SQLiteStore(state.home, synchronous=state.settings.sqlite_synchronous)
    try:
        key = auth.scope_key(Scope.model_validate(SCOPE))
        result = lifecycle_cost.measure(store.tenant(name), key, state.embedder.inner,
                                        queries(state.config.queries, state.config.seed + 1),
                                        limit=state.config.limit, seed=state.config.seed)  # fmt: skip
    finally:
        store.close()
    for label, numbers in result.items():
        state.progress(f"  lifecycle filters ({label}): p50 {numbers['filtersOnMs']['p50']:.2f} ms "
                       f"vs {numbers['filtersOffMs']['p50']:.2f} ms without "
                       f"({numbers['overheadP50Percent']:+.1f}%)")  # fmt: skip
    return result


def _fill_vectors(state: _Run, tenant: Any, mode: str, model: str) -> dict[str, Any]:
    """Give every pending row a vector through ``save_embeddings`` (the worker's own call)."""
    pool_texts = list(state.embedder.vectors)
    pool = np.stack([state.embedder.vectors[t] for t in pool_texts]).astype(np.float32)
    rng = np.random.default_rng(state.config.seed)
    exact = perturbed = embedded = 0
    while jobs := tenant.embedding_jobs(5_000, clock.now_text()):
        vectors = np.zeros((len(jobs), pool.shape[1]), dtype=np.float32)
        missing: list[int] = []
        for i, job in enumerate(jobs):
            known = state.embedder.vectors.get(job.text)
            if known is not None:
                vectors[i] = known
                exact += 1
            else:
                missing.append(i)
        if missing and mode == "full":
            vectors[missing] = state.embedder.inner.embed([jobs[i].text for i in missing])
            embedded += len(missing)
        elif missing:
            vectors[missing] = _pool_vectors(pool, len(missing), state.config.pool_noise, rng)
            perturbed += len(missing)
        tenant.save_embeddings([job.rowid for job in jobs], vectors, model)
        done = exact + perturbed + embedded
        state.progress(f"  vectors: {done:,} saved")
    return {
        "exactFromIngestSample": exact,
        "embedded": embedded,
        "perturbedFromPool": perturbed,
        "poolSize": len(pool_texts) if mode == "pool" else None,
    }


def _pool_vectors(pool: np.ndarray, n: int, noise: float, rng: np.random.Generator) -> np.ndarray:
    """Return ``n`` unit vectors: a random real pool vector plus isotropic Gaussian noise.

    The noise has expected norm ``noise`` (per-dimension sigma ``noise / sqrt(dim)``), so each
    vector keeps a cosine of about ``1 / sqrt(1 + noise**2)`` (0.94 for 0.35) with its base: the
    scope looks like ``len(pool)`` topical clusters of near-paraphrases, as real MiniLM vectors
    of conversational turns do, instead of uniformly random directions.
    """
    base = pool[rng.integers(0, len(pool), size=n)]
    sigma = noise / np.sqrt(pool.shape[1])
    return l2_normalize(base + rng.standard_normal(base.shape, dtype=np.float32) * sigma)


def _measure_latency(state: _Run, name: str, size: int) -> dict[str, Any]:
    """Reopen the store (cold vector cache), warm up once, then time the query set."""
    query_set = queries(state.config.queries, state.config.seed)
    store = _TimedStore(SQLiteStore(state.home, synchronous=state.settings.sqlite_synchronous))
    try:
        embedder = _TimedEmbedder(state.embedder.inner)
        service = MemoryService(store, embedder, state.settings)  # type: ignore[arg-type]
        caller = Caller(tenant=name, key_id="bench", role="admin")
        tenant = store.tenant(name)

        def ask(query: str) -> tuple[dict[str, float], float, int]:
            request = RecallRequest.model_validate(
                {"query": query, "limit": state.config.limit, "scope": SCOPE}
            )
            clocked: dict[str, float] = {}
            with _Clock(clocked, "service"):
                response = service.recall(caller, request)
            timings = {**response.timings, **tenant.last, **embedder.last}
            timings["serverCpuMs"] = clocked["serviceCpuMs"] - embedder.last["embedWrappedCpuMs"]
            return timings, clocked["serviceMs"], len(response.memories)

        cold, cold_total, _ = ask("warm-up: what did I plan in Lisbon with my sister?")
        state.progress(f"  cold load (first query): search {cold['searchMs']:.1f} ms")
        rows: list[dict[str, float]] = []
        load_before, wall0, cpu0 = load_average(), time.perf_counter(), time.process_time()
        for query in query_set:
            timings, total, hits = ask(query)
            timings["serviceMs"] = total
            timings["hits"] = hits
            rows.append(timings)
        loop_wall, loop_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        profile = None
        if state.config.profile_dir is not None:
            profile = _profile(state, size, lambda: [ask(q) for q in query_set])
    finally:
        store.close()

    def col(key: str) -> list[float]:
        return [r[key] for r in rows if key in r]

    server = [r["serviceMs"] - r["embedMs"] for r in rows]
    other = [
        r["searchMs"] - r.get("denseMs", 0) - r.get("lexicalMs", 0) - r.get("recordsMs", 0)
        - r.get("neighboursMs", 0)
        for r in rows
    ]
    search = percentiles(col("searchMs"))
    state.progress(
        f"  search p50 {search['p50']:.2f} ms, p95 {search['p95']:.2f} ms, p99 {search['p99']:.2f} ms"
    )
    result: dict[str, Any] = {
        "coldLoadMs": round(cold["searchMs"], 3),
        "coldLoad": {k: round(v, 3) for k, v in cold.items()},
        "searchMs": search,
        "embedMs": percentiles(col("embedMs")),
        "serviceMinusEmbedMs": percentiles(server),
        "breakdownMs": {
            "dense": percentiles(col("denseMs")),
            "lexical": percentiles(col("lexicalMs")),
            "records": percentiles(col("recordsMs")),
            "neighbours": percentiles(col("neighboursMs")),
            "fusionAndFeatures": percentiles(other),
        },
        # This thread's CPU time (not inflated by waiting for a core; misses BLAS helpers).
        "cpuMs": {
            "serverMinusEmbed": percentiles(col("serverCpuMs")),
            "dense": percentiles(col("denseCpuMs")),
            "lexical": percentiles(col("lexicalCpuMs")),
            "records": percentiles(col("recordsCpuMs")),
        },
        "candidates": {
            "lexicalMean": round(float(np.mean(col("lexicalHits"))), 1),
            "denseMean": round(float(np.mean(col("denseHits"))), 1),
            "recordsMean": round(float(np.mean(col("records"))), 1),
            "hitsMean": round(float(np.mean(col("hits"))), 1),
        },
        "slowestQueries": [
            {"query": q, "searchMs": round(r["searchMs"], 3),
             "lexicalMs": round(r.get("lexicalMs", 0), 3), "lexicalHits": r.get("lexicalHits")}
            for r, q in sorted(zip(rows, query_set, strict=True), key=lambda x: -x[0]["searchMs"])[:5]
        ],  # fmt: skip
    }
    # A process CPU time well below (or above) wall time means waiting for a core (or helper
    # threads spinning): other load on the machine makes the percentiles worse than they are.
    result["queryLoop"] = {"wallSeconds": round(loop_wall, 3), "cpuSeconds": round(loop_cpu, 3),
                           "loadAverageBefore": load_before, "loadAverageAfter": load_average()}  # fmt: skip
    if profile is not None:
        result["profile"] = profile
    return result


def _profile(state: _Run, size: int, work: Callable[[], object]) -> dict[str, Any]:
    """Run the query set again under cProfile (a separate pass: the timed numbers stay clean)."""
    assert state.config.profile_dir is not None
    state.config.profile_dir.mkdir(parents=True, exist_ok=True)
    path = state.config.profile_dir / f"recall_{size}.prof"
    profiler = cProfile.Profile()
    profiler.enable()
    work()
    profiler.disable()
    profiler.dump_stats(path)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(15)
    state.progress(f"  profile written to {path}")
    return {"path": str(path), "topByTottime": text.getvalue()}
