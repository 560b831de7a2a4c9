"""Retrieval evaluation through the production paths: ingest once, ask every question per arm.

For each conversation (LoCoMo sample, LongMemEval question) with at least one scorable
question:

1. its documents (see :mod:`engramdb_bench.documents`) are written into a scope of their own with
   ``MemoryService.write_episodes`` (sessions as ``externalSessionId``, session dates as
   ``observedAt``);
2. the embedding job's own step (``jobs.embedding.embed_batch``) embeds every pending row;
3. each scorable question is asked through ``MemoryService.recall`` with ``limit`` = max k, once
   per arm. An arm is a :class:`~engramdb.config.RetrievalSettings`: ``bm25`` and ``vector`` are
   the production pipeline with the other arm's fusion weight at 0, ``hybrid`` is the default
   settings. The data is ingested and embedded once and shared by the arms.

Each recalled episode maps back to its document; documents rank where their best episode ranks.
Turn-level evidence recall@k is the fraction of gold turns covered by the first k documents.
Session metrics read the server's own session ranking (recall with ``sessions`` = max k):
sessions ranked by their best episode among both arms' candidate pools, so @k counts k
sessions even when the ``limit`` memories come from fewer (``sessionsRetrieved`` reports how
many sessions had any candidate).
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from engramdb.config import RetrievalSettings, Settings
from engramdb.contract.canonical import hash_scope
from engramdb.core.embedding import Embedder, make_embedder
from engramdb.models.base import MAX_LIMIT
from engramdb.models.recall import RecallRequest
from engramdb_bench import metrics
from engramdb_bench.beam import load_beam
from engramdb_bench.datasets import Conversation, Dataset, Question, load_locomo, load_longmemeval
from engramdb_bench.documents import GRANULARITIES, Document, documents, episodes, sdk_episodes
from engramdb_bench.machine import git_commit, machine_info
from engramdb_bench.protocol import protocol
from engramdb_bench.scoring import group_order, score, summarise
from engramdb_bench.targets import InProcess, OverRest, OwnServer, Target

log = logging.getLogger(__name__)

ARMS = ("bm25", "vector", "hybrid", "expand", "plain")
PLAIN = {"time_words_weight": 0.0, "newer_first": False, "entity_weight": 0.0}  # issue 33's mechanisms off
EXPAND_TOP = 3  # the expand arm: hybrid, following links one hop from the top three hits
DATASETS = ("locomo", "longmemeval", "beam")
KS = (1, 5, 10, 20)


class ProgressSink(Protocol):
    """Where the runner reports progress: tasks ``conversations``, ``embedding``, ``questions``."""

    def grow(self, task: str, total: int) -> None:
        """Add ``total`` units of work to ``task``."""

    def advance(self, task: str, n: int = 1) -> None:
        """Mark ``n`` units of ``task`` done."""


class _Silent:
    def grow(self, task: str, total: int) -> None:
        pass

    def advance(self, task: str, n: int = 1) -> None:
        pass


@dataclass(frozen=True)
class EvalConfig:
    """One evaluation run."""

    dataset: str  # locomo or longmemeval
    data: Path
    arms: tuple[str, ...] = ("hybrid",)
    granularity: str = "turn"
    limit_conversations: int | None = None
    limit_questions: int | None = None  # per conversation
    embedder: str = "minilm"
    home: Path | None = None  # default: a temporary folder, removed afterwards
    rest: bool = False  # through the REST API of a server (its own on loopback unless url is set)
    url: str | None = None
    key: str | None = None
    ks: tuple[int, ...] = KS
    tier: str = "100K"  # BEAM: the tier folder under data
    conversations: tuple[str, ...] | None = None  # BEAM: the conversation folders (default: every one)
    write_batch: int = 1000
    embed_batch: int = 256

    def validate(self) -> None:
        """Raise ValueError naming the first bad option."""
        if self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {', '.join(DATASETS)}")
        if not self.arms or any(arm not in ARMS for arm in self.arms):
            raise ValueError(f"arms must be among {', '.join(ARMS)}")
        if self.granularity not in GRANULARITIES:
            raise ValueError(f"granularity must be one of {', '.join(GRANULARITIES)}")
        if self.dataset == "beam" and self.granularity != "pair":
            raise ValueError("BEAM's documents are a user turn and its reply: granularity pair")
        if not self.ks or min(self.ks) < 1 or max(self.ks) > MAX_LIMIT:
            raise ValueError(f"--ks: each depth must be between 1 and {MAX_LIMIT}")
        if (self.rest or self.url) and self.arms != ("hybrid",):
            raise ValueError("through REST only the server's own settings are measured: use --arms hybrid")
        if bool(self.url) != bool(self.key):
            raise ValueError("--url and --key go together")


def arm_settings(arm: str, base: RetrievalSettings) -> RetrievalSettings:
    """Return the retrieval settings of an arm: one arm alone (the other's fusion weight, the
    neighbour lift, the date and time-words features, newer-first and the entity lift off), ``base``
    for hybrid, hybrid with recall's one-hop expansion for expand, and hybrid without the time words,
    newer-first and the entity lift for plain (their cost and worth, asked in the same run)."""
    alone = {
        "fusion": "weighted",
        "neighbour_weight": 0.0,
        "second_neighbour_weight": 0.0,
        "date_weight": 0.0,
        "time_words_weight": 0.0,
        "newer_first": False,
        "entity_weight": 0.0,
    }
    if arm == "bm25":
        return base.model_copy(update={**alone, "dense_weight": 0.0, "lexical_weight": 1.0})
    if arm == "vector":
        return base.model_copy(update={**alone, "dense_weight": 1.0, "lexical_weight": 0.0})
    if arm == "hybrid":
        return base
    if arm == "expand":
        return base.model_copy(update={"expand_top": EXPAND_TOP})
    if arm == "plain":
        return base.model_copy(update=PLAIN)
    raise ValueError(f"unknown arm {arm!r}")


def load_dataset(config: EvalConfig) -> Dataset:
    """Return the dataset the config names."""
    if config.dataset == "locomo":
        return load_locomo(config.data)
    if config.dataset == "beam":
        return load_beam(config.data, config.tier, list(config.conversations) if config.conversations else None)
    return load_longmemeval(config.data)


def scope_of(dataset: str, conversation_id: str) -> dict[str, Any]:
    """Return the scope fields of one conversation (its own participant)."""
    return {
        "agentId": f"eval-{dataset}",
        "profileId": "eval",
        "privacyScope": "private",
        "participantScopeHash": hash_scope([dataset, conversation_id]),
        "sandboxEligible": False,
    }


@dataclass
class _Asked:
    """One question's outcome under one arm."""

    retrieved: list[str]
    scores: dict[str, float]
    wall_ms: float
    timings: dict[str, float]


@dataclass
class _Totals:
    conversations: int = 0
    conversations_skipped: int = 0
    sessions: int = 0
    documents: int = 0
    episodes: int = 0
    episodes_created: int = 0
    split_documents: int = 0
    embedded: int = 0
    write_s: float = 0.0
    embed_s: float = 0.0
    skipped: Counter[str] = field(default_factory=Counter)
    over_limit: int = 0

    def counts(self, questions_asked: int) -> dict[str, Any]:
        """Return what was ingested and asked, for the result document."""
        return {
            "conversations": self.conversations,
            "conversationsWithoutScorableQuestions": self.conversations_skipped,
            "sessions": self.sessions,
            "documents": self.documents,
            "episodes": self.episodes,
            "documentsSplitAcrossEpisodes": self.split_documents,
            "questionsAsked": questions_asked,
            "questionsSkipped": dict(self.skipped),
            "questionsOverLimit": self.over_limit,
        }

    def ingest(self) -> dict[str, Any]:
        """Return the write and embedding times and the end-to-end rate."""
        spent = self.write_s + self.embed_s
        return {
            "episodesCreated": self.episodes_created,
            "episodesEmbedded": self.embedded,
            "writeSeconds": round(self.write_s, 3),
            "embedSeconds": round(self.embed_s, 3),
            "totalSeconds": round(spent, 3),
            "episodesPerSecond": round(self.episodes / spent, 2) if spent else None,
        }


class _Run:
    def __init__(self, config: EvalConfig, dataset: Dataset, home: Path, progress: ProgressSink) -> None:
        self.config = config
        self.dataset = dataset
        self.progress = progress
        self.target: Target
        if config.url and config.key:
            self.target, self.model = OverRest(config.url, config.key), "the server's embedder"
        elif config.rest:
            self.target, self.model = OwnServer(home, config.embedder), config.embedder
        else:
            embedder: Embedder = make_embedder(config.embedder)
            slug = re.sub(r"[^a-z0-9]+", "-", embedder.model_id.lower()).strip("-")
            tenant = f"eval-{dataset.name}-{config.granularity}-{slug}"[:63].rstrip("-")
            base = Settings(home=home).retrieval
            arms = {arm: arm_settings(arm, base) for arm in config.arms}
            self.target, self.model = InProcess(home, embedder, tenant, arms), embedder.model_id
        self.totals = _Totals()
        self.questions: list[dict[str, Any]] = []

    def close(self) -> None:
        self.target.close()

    # -- one conversation -----------------------------------------------------------------

    def conversation(self, conv: Conversation) -> None:
        asked = [q for q in conv.questions if q.skip_reason is None]
        for q in conv.questions:
            if q.skip_reason is not None:
                self.totals.skipped[q.skip_reason] += 1
        if self.config.limit_questions is not None:
            self.totals.over_limit += max(0, len(asked) - self.config.limit_questions)
            asked = asked[: self.config.limit_questions]
        if not asked:  # nothing to score: do not spend the embedding time
            self.totals.conversations_skipped += 1
            return
        self.totals.conversations += 1
        self.totals.sessions += len(conv.sessions)
        scope = scope_of(self.dataset.name, conv.conversation_id)
        docs, owner = self.ingest(conv, scope)
        self.embed()
        self.progress.grow("questions", len(asked) * len(self.config.arms))
        for q in asked:
            record: dict[str, Any] = {
                "id": q.question_id,
                "conversation": conv.conversation_id,
                "category": q.category,
                "question": q.text,
                "goldTurns": sorted(q.evidence_turns),
                "goldSessions": sorted(q.evidence_sessions),
                "arms": {},
            }
            for arm in self.config.arms:
                result = self.ask(arm, q, scope, docs, owner)
                record["arms"][arm] = {
                    "retrieved": result.retrieved,
                    "metrics": result.scores,
                    "ms": round(result.wall_ms, 3),
                    "timings": result.timings,
                }
                self.progress.advance("questions")
            self.questions.append(record)

    def ingest(self, conv: Conversation, scope: dict[str, Any]) -> tuple[list[Document], dict[str, int]]:
        """Write the conversation's documents; return them and episode id -> document index."""
        docs = documents(conv, self.config.granularity)
        bodies, doc_index = [], []
        next_turn: Counter[str] = Counter()
        write = sdk_episodes if self.dataset.writes == "sdk" else episodes
        for i, doc in enumerate(docs):
            carried = write(doc, scope, next_turn[doc.session_id], provenance=f"eval:{self.dataset.name}")
            next_turn[doc.session_id] += len(carried)
            self.totals.split_documents += len(carried) > 1
            bodies.extend(carried)
            doc_index.extend([i] * len(carried))
        owner: dict[str, int] = {}
        created = 0
        started = time.perf_counter()
        for start in range(0, len(bodies), self.config.write_batch):
            chunk = bodies[start : start + self.config.write_batch]
            for (memory_id, was_created), i in zip(
                self.target.write(chunk), doc_index[start : start + len(chunk)], strict=True
            ):
                owner[memory_id] = i
                created += was_created
        self.totals.write_s += time.perf_counter() - started
        self.totals.episodes_created += created
        self.totals.documents += len(docs)
        self.totals.episodes += len(bodies)
        self.progress.grow("embedding", created)
        return docs, owner

    def embed(self) -> None:
        """Embed every pending row with the embedding job's own batch step."""
        started = time.perf_counter()
        done = self.target.settle()
        self.totals.embedded += done
        self.progress.advance("embedding", done)
        self.totals.embed_s += time.perf_counter() - started

    def ask(
        self,
        arm: str,
        q: Question,
        scope: dict[str, Any],
        docs: Sequence[Document],
        owner: dict[str, int],
    ) -> _Asked:
        """Ask one question through the production recall path and score the ranking."""
        k = max(self.config.ks)
        request = RecallRequest.model_validate({"query": q.text, "scope": scope, "limit": k, "sessions": k})
        started = time.perf_counter()
        response = self.target.recall(arm, request)
        wall_ms = (time.perf_counter() - started) * 1000
        unknown = [m.id for m in response.memories if m.id not in owner]
        if unknown:
            log.warning("recall returned %d memories that are not this conversation's", len(unknown))
        ranking = metrics.first_occurrences(owner[m.id] for m in response.memories if m.id in owner)
        sessions = [s.session_id for s in response.sessions or []]
        scores = score(q, [docs[i] for i in ranking], sessions, self.config.ks)
        return _Asked([docs[i].doc_id for i in ranking], scores, wall_ms, dict(response.timings))


def run(config: EvalConfig, progress: ProgressSink | None = None) -> dict[str, Any]:
    """Run one evaluation; return the result document (config, counts, ingest, per-arm metrics, questions)."""
    config.validate()
    sink = progress or _Silent()
    dataset = load_dataset(config)
    home = config.home or Path(tempfile.mkdtemp(prefix="engram-eval-"))
    started = time.perf_counter()
    state = _Run(config, dataset, home, sink)
    try:
        total = dataset.size if config.limit_conversations is None else min(dataset.size, config.limit_conversations)
        sink.grow("conversations", total)
        for conv in itertools.islice(dataset.conversations, config.limit_conversations):
            state.conversation(conv)
            sink.advance("conversations")
    finally:
        state.close()
        if config.home is None:
            shutil.rmtree(home, ignore_errors=True)
    return _document(state, time.perf_counter() - started)


def _document(state: _Run, elapsed: float) -> dict[str, Any]:
    config, dataset, questions = state.config, state.dataset, state.questions
    return {
        "dataset": dataset.name,
        "data": dataset.source,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "config": {
            **{k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()},
            "embedderModel": state.model,
            "limit": max(config.ks),
            "key": "***" if config.key else None,
        },
        "protocol": protocol(dataset.name, config.granularity, config.ks),
        "counts": state.totals.counts(len(questions)),
        "ingest": state.totals.ingest(),
        "runSeconds": round(elapsed, 2),
        "retrieval": state.target.retrieval(),
        "groups": dict(group_order(dataset, (q["category"] for q in questions))),
        "arms": summarise(questions, config.arms, dataset),
        "machine": machine_info(),
        "git": git_commit(),
        "questions": questions,
    }
