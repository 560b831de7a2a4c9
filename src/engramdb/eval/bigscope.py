"""``engram bench bigscope``: recall when one scope holds up to a million memories, and a million
memories over a thousand scopes, on both backends.

For each layout (``one:N``: N memories in one scope; ``spread:N:S``: N over S scopes) and backend:

1. load the corpus (storage's ``bulk_load``: the write path's own rows, already embedded; a
   sample written both ways first checks that the two leave the same rows);
2. in process, with the server's default settings: the first recall of each scope asked (its
   copy loads), then the timed recalls (``core.recall.recall``, query vectors precomputed: the
   query embedding is timed apart) and each arm alone, and the whole recall's top 10 against the
   same recall on a store whose vector arm never turns approximate (the exact answer);
3. a real server (``engram serve``) started on the data: time to ``/readyz``, the first recall
   after that restart and the next ones over HTTP, and the server's peak RSS.

Ingest (``--ingest N``): the default embedder's own batch throughput on N corpus texts, then the
same texts through ``POST /v1/episodes/batch`` of a real server until every vector is ready,
interleaved twice. Every phase records the load average.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from engramdb.config import RetrievalSettings, Settings
from engramdb.contract.canonical import hash_scope, sha256_hex
from engramdb.contract.events import EpisodeWrite, Scope
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.recall import lexical_terms, recall
from engramdb.core.rows import episode_row
from engramdb.core.service import MemoryService, TimeTravel, lifecycle_filter
from engramdb.eval.bigscope_corpus import Corpus, episode_body
from engramdb.eval.lifecycle_cost import PrecomputedEmbedder
from engramdb.eval.machine import load_average, machine_info, source_info
from engramdb.eval.scale import _postgres, shared_buffers_mb
from engramdb.storage.port import AuditDraft, NewMemory, Store, TenantStore
from engramdb.storage.registry import open_store

Progress = Callable[[str], None]
TENANT = "big"
_BATCH = 5_000
_EXACT = {"ann_min_rows": 10**12}  # the reference: every vector scanned


@dataclass(frozen=True)
class Layout:
    """How many memories, over how many scopes."""

    total: int
    scopes: int

    @property
    def name(self) -> str:
        return f"one:{self.total}" if self.scopes == 1 else f"spread:{self.total}:{self.scopes}"

    @classmethod
    def parse(cls, text: str) -> Layout:
        kind, *numbers = text.split(":")
        if kind == "one" and len(numbers) == 1:
            return cls(int(numbers[0]), 1)
        if kind == "spread" and len(numbers) == 2:
            return cls(int(numbers[0]), int(numbers[1]))
        raise ValueError(f"a layout is one:N or spread:N:SCOPES, not {text!r}")


@dataclass
class Target:
    """Where one backend's data lives: a SQLite folder, or a PostgreSQL URL and schema."""

    backend: str
    home: Path
    url: str | None = None
    schema: str | None = None

    def settings(self, **extra: Any) -> Settings:
        values: dict[str, Any] = {"home": self.home, "embedder": "minilm", **extra}
        if self.url:
            values.update(database_url=self.url, pg_schema=self.schema)
        return Settings(**values)

    def open(self, **extra: Any) -> Store:
        settings = self.settings(**extra)
        return open_store(settings.storage_url(), **settings.store_options())

    def env(self) -> dict[str, str]:
        env = {**os.environ, "ENGRAM_HOME": str(self.home), "ENGRAM_EMBEDDER": "minilm"}
        if self.url:
            env.update(ENGRAM_DATABASE_URL=self.url, ENGRAM_PG_SCHEMA=str(self.schema))
        return env


def scope_of(i: int) -> dict[str, Any]:
    return {"agentId": "bench", "profileId": "bigscope", "privacyScope": "shared",
            "participantScopeHash": hash_scope([f"team-{i}"]), "sandboxEligible": False}  # fmt: skip


def _key(i: int) -> str:
    return auth.scope_key(Scope.model_validate(scope_of(i)))


def run(
    corpus: Corpus, backends: Sequence[str], layouts: Sequence[Layout], *, queries: int, pg_url: str | None,
    ingest: int, progress: Progress, seed: int = 7,
) -> dict[str, Any]:  # fmt: skip
    """Measure every (backend, layout); start a throwaway PostgreSQL when none is given."""
    root = Path(tempfile.mkdtemp(prefix="engram-bigscope-"))
    root.chmod(0o755)
    results: list[dict[str, Any]] = []
    checks: dict[str, Any] = {}
    try:
        throwaway = "postgres" in backends and pg_url is None
        with _postgres(root, pg_url if "postgres" in backends else None, throwaway) as url:
            for backend in backends:
                checks[backend] = same_rows(corpus, _target(backend, root, url, "check"), progress)
                for layout in layouts:
                    target = _target(backend, root, url, layout.name.replace(":", "_"))
                    progress(f"{backend} {layout.name}: loading")
                    results.append(measure(corpus, target, layout, queries=queries, seed=seed, progress=progress,
                                           pg_dir=root / "pg" if throwaway else None))  # fmt: skip
                    progress(f"  {_summary(results[-1])}")
        ingest_result = measure_ingest(corpus, root / "ingest", ingest, progress) if ingest else None
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {
        "benchmark": "bigscope", "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_info(), "source": source_info(),
        "postgres": {"sharedBuffersMb": shared_buffers_mb()} if "postgres" in backends else None,
        "corpus": {"baseTurns": len(corpus.turns), "questions": len(corpus.questions), "model": corpus.model},
        "sameRowsCheck": checks, "results": results, "ingest": ingest_result,
    }  # fmt: skip


def _target(backend: str, root: Path, url: str | None, name: str) -> Target:
    home = root / f"{backend}-{name}"
    home.mkdir(parents=True, exist_ok=True)
    if backend == "sqlite":
        return Target("sqlite", home)
    return Target("postgres", home, url, f"big_{name}_{uuid.uuid4().hex[:6]}")


def _summary(result: dict[str, Any]) -> str:
    warm, server = result["recall"]["searchMs"], result.get("server", {})
    return (f"recall p50 {warm['p50']} p99 {warm['p99']} ms, recall@10 vs exact {result['recallAt10VsExact']}, "
            f"first after restart {server.get('firstRecallMs')} ms, server peak RSS {server.get('peakRssMb')} MB")


# -- loading ---------------------------------------------------------------------------------


def corpus_rows(corpus: Corpus, layout: Layout, now: str) -> Iterator[tuple[NewMemory, np.ndarray, AuditDraft]]:
    """The layout's rows as the write path makes them, with their vectors and audit drafts."""
    caller = Caller(TENANT, "bench", "admin")
    indexes: dict[str, int] = {}
    for ordinal, turn, text, session, vector in corpus.rows(layout.total):
        body = EpisodeWrite.model_validate(episode_body(scope_of(ordinal % layout.scopes), turn, text, session,
                                                        indexes.setdefault(session, 0)))  # fmt: skip
        indexes[session] += 1
        scope = auth.resolve_scope(caller, body.named_scope_fields())
        row = episode_row(body.to_event(scope), scope, now)
        audit = caller.audit("episode.write", target_kind=row.source, target_id=row.memory_id,
                             scope_key=row.scope.scope_key, after_digest=sha256_hex(row.event_json))  # fmt: skip
        yield row, vector, audit


def bulk_load(store: Store, corpus: Corpus, layout: Layout, progress: Progress) -> float:
    """Load the layout through ``bulk_load``; return the seconds it took."""
    tenant = store.tenant(TENANT, create=True)
    started, batch = time.perf_counter(), []
    for item in corpus_rows(corpus, layout, _now()):
        batch.append(item)
        if len(batch) == _BATCH:
            _load(tenant, corpus, batch)
            batch = []
            done = tenant.embedding_counts()["ready"]
            if done % 100_000 == 0:
                progress(f"  loaded {done:,}/{layout.total:,} ({time.perf_counter() - started:.0f} s)")
    _load(tenant, corpus, batch)
    return time.perf_counter() - started


def _load(tenant: TenantStore, corpus: Corpus, batch: list[tuple[NewMemory, np.ndarray, AuditDraft]]) -> None:
    if batch:
        tenant.bulk_load([r for r, _, _ in batch], np.stack([v for _, v, _ in batch]), corpus.model,
                         [a for _, _, a in batch])  # fmt: skip


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_VOLATILE = {"recorded_at", "active_from"}  # the write path stamps its own clock


def same_rows(corpus: Corpus, target: Target, progress: Progress, n: int = 300) -> dict[str, Any]:
    """Write ``n`` corpus rows through the write path (``write_episodes``, then the embedding job's
    ``save_embeddings``) and through ``bulk_load`` into two tenants; compare what each stored."""
    store = target.open()
    try:
        layout = Layout(n, 3)
        items = list(corpus_rows(corpus, layout, _now()))
        store.tenant("bulk", create=True).bulk_load([r for r, _, _ in items], np.stack([v for _, v, _ in items]),
                                                    corpus.model, [a for _, _, a in items])  # fmt: skip
        service = MemoryService(store, PrecomputedEmbedder({"x": corpus.vectors[0]}, corpus.model), Settings())
        production = store.tenant("written", create=True)
        bodies = [EpisodeWrite.model_validate(episode_body(scope_of(o % layout.scopes), t, text, s, 0))
                  for o, t, text, s, _ in corpus.rows(n)]  # fmt: skip
        _reindex(bodies)
        service.write_episodes(Caller("written", "bench", "admin"), bodies)
        jobs = production.embedding_jobs(n, "9999-01-01T00:00:00.000000Z")
        production.save_embeddings([j.rowid for j in jobs], np.stack([v for _, v, _ in items]), corpus.model)
        differences = _differences(store.tenant("bulk"), production)
    finally:
        store.close()
    progress(f"{target.backend}: {n} rows written both ways, {len(differences)} differences")
    return {"rows": n, "differences": differences[:10], "identical": not differences,
            "ignored": sorted(_VOLATILE | {"rowid", "audit at/hash/prev_hash"})}  # fmt: skip


def _reindex(bodies: list[EpisodeWrite]) -> None:
    """Number the turns of each session from 0, as ``corpus_rows`` does."""
    seen: dict[str, int] = {}
    for i, body in enumerate(bodies):
        session = str(body.external_session_id)
        bodies[i] = body.model_copy(update={"turn_index": seen.get(session, 0)})
        seen[session] = seen.get(session, 0) + 1


def _differences(bulk: TenantStore, written: TenantStore) -> list[str]:
    def table(tenant: TenantStore, name: str) -> list[dict[str, Any]]:
        rows = [r for t, r in tenant.export_rows() if t == name]
        skip = _VOLATILE | {"at", "hash", "prev_hash"}
        return [{k: v for k, v in r.items() if k not in skip} for r in rows]

    found = []
    for name in ("memories", "audit_log"):
        a, b = table(bulk, name), table(written, name)
        if len(a) != len(b):
            found.append(f"{name}: {len(a)} rows vs {len(b)}")
        for x, y in zip(a, b, strict=False):
            found += [f"{name} {k}: {x.get(k)!r:.60} vs {y.get(k)!r:.60}" for k in x if x.get(k) != y.get(k)]
    return found


# -- measuring -------------------------------------------------------------------------------


def measure(
    corpus: Corpus, target: Target, layout: Layout, *, queries: int, seed: int, progress: Progress,
    pg_dir: Path | None,
) -> dict[str, Any]:  # fmt: skip
    store = target.open()
    try:
        load_s = bulk_load(store, corpus, layout, progress)
        progress(f"  loaded in {load_s:.0f} s; tidying")
        store.maintain()
    finally:
        store.close()
    asked = _Asked.draw(corpus, layout, queries, seed)
    result: dict[str, Any] = {
        "backend": target.backend, "layout": layout.name, "total": layout.total, "scopes": layout.scopes,
        "load": {"seconds": round(load_s, 1), "rowsPerSecond": round(layout.total / load_s),
                 "path": "bulk_load (bench only)"},
        "diskMb": _disk_mb(target, pg_dir),
    }  # fmt: skip
    result.update(_in_process(target, asked, progress))
    result["server"] = measure_server(target, asked, progress)
    return result


@dataclass
class _Asked:
    """The timed queries: the scope index each asks, its text and the model's vector of it."""

    scopes: list[int]
    texts: list[str]
    vectors: np.ndarray

    @classmethod
    def draw(cls, corpus: Corpus, layout: Layout, n: int, seed: int) -> _Asked:
        rng = random.Random(seed)
        picks = rng.sample(range(len(corpus.questions)), min(n, len(corpus.questions)))
        scopes = [rng.randrange(layout.scopes) for _ in picks]
        return cls(scopes, [corpus.questions[i] for i in picks], corpus.question_vectors[picks])

    def embedder(self) -> PrecomputedEmbedder:
        return PrecomputedEmbedder(dict(zip(self.texts, self.vectors, strict=True)), "precomputed")


def _in_process(target: Target, asked: _Asked, progress: Progress) -> dict[str, Any]:
    """First and warm recall times, each arm alone, and the top 10 against the exact reference."""
    filt = lifecycle_filter(TimeTravel(), sources=("EPISODE", "MEMORY_FACT"))
    settings, embedder = RetrievalSettings(), asked.embedder()
    load_before = load_average()
    timings: dict[str, list[float]] = {"first": [], "search": [], "dense": [], "lexical": []}
    tops: list[list[str]] = []
    store = target.open()
    try:
        tenant = store.tenant(TENANT)
        seen: set[int] = set()
        for scope, text in zip(asked.scopes, asked.texts, strict=True):  # each scope's first recall loads it
            if scope not in seen:
                seen.add(scope)
                timings["first"].append(_timed_recall(tenant, embedder, _key(scope), text, filt, settings)[0])
        for scope, text, vector in zip(asked.scopes, asked.texts, asked.vectors, strict=True):
            ms, top = _timed_recall(tenant, embedder, _key(scope), text, filt, settings)
            timings["search"].append(ms)
            tops.append(top)
            timings["dense"].append(_ms(lambda: tenant.vector_candidates(_key(scope), vector, filt, 200)))  # noqa: B023
            timings["lexical"].append(_ms(lambda: tenant.text_candidates(_key(scope), lexical_terms(text), filt, 200)))  # noqa: B023
        progress(f"  in process: search p50 {np.percentile(timings['search'], 50):.1f} ms")
    finally:
        store.close()
    exact_tops = _exact_tops(target, asked, filt, settings, embedder)
    overlap = [len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(tops, exact_tops, strict=True)]
    return {
        "recall": {"searchMs": _pct(timings["search"]), "firstRecallOfScopeMs": _pct(timings["first"]),
                   "denseArmMs": _pct(timings["dense"]), "lexicalArmMs": _pct(timings["lexical"]),
                   "queries": len(asked.texts), "scopesAsked": len(timings["first"])},
        "recallAt10VsExact": round(float(np.mean(overlap)), 4),
        "queryEmbedMs": _embed_ms(asked),
        "loadAverage": {"before": load_before, "after": load_average()},
    }  # fmt: skip


def _timed_recall(tenant: TenantStore, embedder: PrecomputedEmbedder, key: str, text: str, filt: Any,
                  settings: RetrievalSettings) -> tuple[float, list[str]]:  # fmt: skip
    started = time.perf_counter()
    with tenant.reading() as reader:
        outcome = recall(reader, embedder, scope_key=key, query=text, filt=filt, limit=10, settings=settings)
    return (time.perf_counter() - started) * 1000, [h.record.memory_id for h in outcome.hits]


def _exact_tops(target: Target, asked: _Asked, filt: Any, settings: RetrievalSettings,
                embedder: PrecomputedEmbedder) -> list[list[str]]:  # fmt: skip
    store = target.open(**_EXACT, memory_mb=8192)
    try:
        tenant = store.tenant(TENANT)
        return [_timed_recall(tenant, embedder, _key(s), t, filt, settings)[1]
                for s, t in zip(asked.scopes, asked.texts, strict=True)]  # fmt: skip
    finally:
        store.close()


def _embed_ms(asked: _Asked) -> dict[str, float]:
    from engramdb.core.embedding import make_embedder

    model = make_embedder("minilm")
    model.embed(["load"])
    return _pct([_ms(lambda: model.embed([t])) for t in asked.texts[:100]])  # noqa: B023


def _ms(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return (time.perf_counter() - started) * 1000


def _pct(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    return {f"p{p}": round(float(np.percentile(values, p)), 2) for p in (50, 95, 99)} | {"n": len(values)}


def _disk_mb(target: Target, pg_dir: Path | None) -> float | None:
    folder = target.home if target.backend == "sqlite" else pg_dir
    if folder is None:
        return None
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20, 1)


# -- a real server ---------------------------------------------------------------------------


@contextmanager
def server(target: Target, progress: Progress, **env: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run ``engram serve`` on the target's data; yield its URL and process (stopped after)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (target.home / f"server-{port}.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "engramdb.cli", "serve", "--port", str(port)],
                               env={**target.env(), **env}, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}", process
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return -1.0


def _wait(http: httpx.Client, path: str, deadline_s: float) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < deadline_s:
        try:
            if http.get(path).status_code == 200:
                return (time.perf_counter() - started) * 1000
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.05)
    raise TimeoutError(f"{path} did not answer 200 in {deadline_s} s")


def measure_server(target: Target, asked: _Asked, progress: Progress, warm_queries: int = 100) -> dict[str, Any]:
    """Restart on the data: time to ready, the first recall and the next ones over HTTP, peak RSS."""
    store = target.open()
    try:
        token, _ = auth.create_key(store, tenant=TENANT, role="admin", grant={})
    finally:
        store.close()
    load_before = load_average()
    started = time.perf_counter()
    with server(target, progress) as (url, process), httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120
    ) as http:
        live_ms = _wait(http, "/healthz", 120)
        ready_ms = _wait(http, "/readyz", 3600) + live_ms
        readiness = http.get("/readyz").json()
        asks = list(zip(asked.scopes, asked.texts, strict=True))
        first_ms, first_timings = _http_recall(http, *asks[0])
        rest = [_http_recall(http, s, t) for s, t in asks[1 : warm_queries + 1]]
        rss = peak_rss_mb(process.pid)
    warm = [ms for ms, _ in rest]
    result = {
        "startToReadyMs": round(ready_ms, 1), "startToLiveMs": round(live_ms, 1), "readyz": readiness,
        "firstRecallMs": round(first_ms, 2), "firstRecallTimings": first_timings,
        "warmRecallMs": _pct(warm), "warmSearchMs": _pct([t.get("searchMs", 0.0) for _, t in rest]),
        "firstOverWarmP50": round(first_ms / float(np.percentile(warm, 50)), 2) if warm else None,
        "peakRssMb": rss, "wallSeconds": round(time.perf_counter() - started, 1),
        "loadAverage": {"before": load_before, "after": load_average()},
    }  # fmt: skip
    progress(f"  server: ready in {ready_ms / 1000:.1f} s, first recall {first_ms:.1f} ms, warm p50 "
             f"{result['warmRecallMs'].get('p50')} ms, peak RSS {rss} MB")  # fmt: skip
    return result


def _http_recall(http: httpx.Client, scope: int, text: str) -> tuple[float, dict[str, float]]:
    started = time.perf_counter()
    answer = http.post("/v1/recall", json={"query": text, "limit": 10, "scope": scope_of(scope)})
    ms = (time.perf_counter() - started) * 1000
    answer.raise_for_status()
    return ms, dict(answer.json().get("timings", {}))


# -- ingest ----------------------------------------------------------------------------------


def measure_ingest(corpus: Corpus, root: Path, n: int, progress: Progress, rounds: int = 2) -> dict[str, Any]:
    """The embedder's own batch throughput against REST batch writes of the same texts, interleaved."""
    from engramdb.core.embedding import make_embedder

    texts = [text for _, _, text, _, _ in corpus.rows(n, seed=11)]
    embedder = make_embedder("minilm")
    embedder.embed(["load"])
    batch = Settings().embed_batch_size
    passes: list[dict[str, Any]] = []
    for r in range(rounds):
        load_before = load_average()
        started = time.perf_counter()
        for start in range(0, n, batch):
            embedder.embed(texts[start : start + batch])
        embed_rate = n / (time.perf_counter() - started)
        rest_rate = _rest_ingest(corpus, root / f"round-{r}", n, progress)
        passes.append({"embedderTextsPerSec": round(embed_rate, 1), "restEpisodesPerSec": round(rest_rate, 1),
                       "ratio": round(rest_rate / embed_rate, 3),
                       "loadAverage": [load_before, load_average()]})  # fmt: skip
        progress(f"ingest round {r + 1}: embedder {embed_rate:.1f}/s, REST {rest_rate:.1f}/s "
                 f"({rest_rate / embed_rate:.0%})")  # fmt: skip
    return {"texts": n, "embedBatch": batch, "restBatch": 100, "passes": passes}


def _rest_ingest(corpus: Corpus, home: Path, n: int, progress: Progress) -> float:
    home.mkdir(parents=True, exist_ok=True)
    target = Target("sqlite", home)
    store = target.open()
    try:
        token, _ = auth.create_key(store, tenant=TENANT, role="admin", grant={}, create_tenant=True)
    finally:
        store.close()
    bodies = [episode_body(scope_of(0), t, text, f"ingest-{s}", i)
              for i, (_, t, text, s, _) in enumerate(corpus.rows(n, seed=11))]  # fmt: skip
    with server(target, progress) as (url, _), httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120
    ) as http:
        _wait(http, "/readyz", 600)
        started = time.perf_counter()
        for start in range(0, n, 100):
            http.post("/v1/episodes/batch", json={"episodes": bodies[start : start + 100]}).raise_for_status()
        reader = target.open()
        try:
            while reader.tenant(TENANT).embedding_counts()["ready"] < n:
                time.sleep(0.05)
        finally:
            reader.close()
        return n / (time.perf_counter() - started)

