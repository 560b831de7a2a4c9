"""The big-scope benchmark's corpus: real conversation turns, repeated with variation, with
vectors from the default model.

The base turns are LoCoMo's turns (``Speaker: text``) and the LongMemEval sample's user turns.
Copy 0 is the turns as they are; copy ``c`` swaps each LoCoMo speaker for another name and
shifts the numbers, so copies are near-paraphrases, as a long shared scope repeats itself.
Vectors: the model's vector of each base turn (embedded once and cached), copy 0 exactly, later
copies plus a little noise (cosine ~0.97 with the base): model neighbourhoods, without
embedding a million texts. Queries are LoCoMo's questions, embedded by the model.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engramdb.core.embedding import Embedder, l2_normalize
from engramdb_bench.datasets import LOCOMO_SCORED, load_locomo, load_longmemeval
from engramdb_bench.synthetic_corpus import NAMES

TEXT_CAP = 4000  # a summary's limit: a copy whose numbers grew is cut back to it
COPY_NOISE = 0.25  # norm of the noise a copy's vector gets (per dimension: / sqrt(dim))
_DIGITS = re.compile(r"\d+")
Progress = Callable[[str], None]


@dataclass(frozen=True)
class BaseTurn:
    """A turn as written once: its text, session, date, and the speaker names it may swap."""

    text: str
    session: str
    observed_at: str
    speakers: tuple[str, ...]


@dataclass
class Corpus:
    """The base turns with their model vectors, and the questions with theirs."""

    turns: list[BaseTurn]
    vectors: np.ndarray
    questions: list[str]
    question_vectors: np.ndarray
    model: str
    embed_seconds: float  # embedding what was not cached (0 when all came from the cache)

    def rows(self, total: int, seed: int = 7) -> Iterator[tuple[int, BaseTurn, str, str, np.ndarray]]:
        """Yield ``total`` rows: (session ordinal, base turn, text, session id, vector), copies in turn."""
        rng = np.random.default_rng(seed)
        sessions: dict[str, int] = {}
        dim = self.vectors.shape[1]
        for n in range(total):
            copy, i = divmod(n, len(self.turns))
            turn = self.turns[i]
            session = f"c{copy}-{turn.session}"
            ordinal = sessions.setdefault(session, len(sessions))
            vector = self.vectors[i]
            if copy:
                noise = rng.standard_normal(dim, dtype=np.float32) * np.float32(COPY_NOISE / np.sqrt(dim))
                vector = l2_normalize((vector + noise)[None, :])[0]
            yield ordinal, turn, vary(turn, copy)[:TEXT_CAP], session, vector


def vary(turn: BaseTurn, copy: int) -> str:
    """Return copy ``copy`` of a turn: its speakers renamed and its numbers shifted (copy 0: as is)."""
    if copy == 0:
        return turn.text
    text = turn.text
    for k, speaker in enumerate(turn.speakers):
        text = text.replace(speaker, NAMES[(copy * 7 + k * 13 + len(speaker)) % len(NAMES)])
    return _DIGITS.sub(lambda m: str(int(m.group()) + copy), text)


def load(shared: Path, cache: Path, embedder: Embedder, progress: Progress) -> Corpus:
    """Read the datasets under ``shared`` (../shared/bench) and embed what the cache lacks."""
    turns: list[BaseTurn] = []
    questions: list[str] = []
    for conversation in load_locomo(shared / "locomo" / "locomo10.json").conversations:
        speakers = tuple(sorted({t.role for s in conversation.sessions for t in s.turns}))
        for session in conversation.sessions:
            turns += [
                BaseTurn(t.text, f"{conversation.conversation_id}-{session.session_id}", session.observed_at, speakers)
                for t in session.turns
                if t.text.strip()
            ]
        questions += [q.text for q in conversation.questions if q.category in LOCOMO_SCORED]
    for conversation in load_longmemeval(shared / "longmemeval" / "sample").conversations:
        for session in conversation.sessions:
            name = f"{conversation.conversation_id}-{session.session_id}"
            turns += [
                BaseTurn(t.text[:TEXT_CAP], name, session.observed_at, ())
                for t in session.turns
                if t.indexed and t.text.strip()
            ]
    started = time.perf_counter()
    vectors = _embedded(cache, "turns", [t.text for t in turns], embedder, progress)
    question_vectors = _embedded(cache, "questions", questions, embedder, progress)
    spent = time.perf_counter() - started
    return Corpus(turns, vectors, questions, question_vectors, embedder.model_id, round(spent, 1))


def _embedded(cache: Path, name: str, texts: list[str], embedder: Embedder, progress: Progress) -> np.ndarray:
    """The texts' vectors, from ``cache`` when it holds exactly these texts for this model."""
    digest = hashlib.sha256("\x1e".join([embedder.model_id, *texts]).encode()).hexdigest()[:16]
    path = cache / f"{name}-{digest}.npy"
    if path.exists():
        cached: np.ndarray = np.load(path)
        return cached
    cache.mkdir(parents=True, exist_ok=True)
    progress(f"embedding {len(texts):,} {name} with {embedder.model_id} (cached in {path})")
    order = np.argsort([len(t) for t in texts])  # similar lengths together: less padding
    vectors = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    for start in range(0, len(texts), 256):
        chunk = order[start : start + 256]
        vectors[chunk] = embedder.embed([texts[i] for i in chunk])
        if start % 2560 == 0:
            progress(f"  {start:,}/{len(texts):,}")
    np.save(path, vectors)
    return vectors


def episode_body(scope: dict[str, Any], turn: BaseTurn, text: str, session: str, index: int) -> dict[str, Any]:
    """An episode write of one corpus row (the text as summary and user text, as the evals write)."""
    return {
        **scope,
        "runtime": "custom",
        "externalSessionId": session,
        "turnIndex": index,
        "userText": text,
        "assistantText": "",
        "summary": text,
        "conversationKind": "direct",
        "visibility": "participant",
        "trustClass": "trusted",
        "originClass": "conversation",
        "observedAt": turn.observed_at,
        "provenance": "bench:bigscope",
    }
