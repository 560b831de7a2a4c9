"""Settings: explicit arguments > ``ENGRAM_*`` environment (nested with ``__``) > defaults.

Read once in an entry point and passed down; nothing reads the environment at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class RetrievalSettings(BaseModel):
    """Recall tuning knobs (defaults measured in bench/RESULTS.md)."""

    fusion: str = Field("weighted", description="'weighted' (min-max normalised sum) or 'rrf' (reciprocal rank)")
    rrf_k: int = Field(60, description="RRF constant k")
    dense_weight: float = Field(0.5, description="weight of the vector arm in fusion")
    lexical_weight: float = Field(0.5, description="weight of the lexical arm in fusion")
    recency_weight: float = Field(0.02, description="weight of the recency feature")
    recency_half_life_days: float = Field(180.0, description="recency decays by half every N days")
    confidence_weight: float = Field(0.02, description="weight of a fact's confidence")
    importance_weight: float = Field(0.01, description="weight of the source prior (facts > episodes)")
    trust_weight: float = Field(0.05, description="weight of trust (the policy's weight per trust class and origin)")
    neighbour_weight: float = Field(
        0.4,
        ge=0,
        description="share of the best neighbouring turn's fused score an episode gains (0 = off); an episode "
        "holding a whole exchange (the user's words and the answer) gains none",
    )
    second_neighbour_weight: float = Field(0.2, ge=0, description="the same for the turns two away (0 = off)")
    lexical_coverage_exponent: float = Field(
        1.0,
        ge=0,
        description="the lexical arm's weight is multiplied by the share of the query's word information "
        "(IDF) that some memory in the scope contains, to this power (0 = off)",
    )
    date_weight: float = Field(
        0.3, ge=0, description="weight of a memory observed in (or just after) a date the query names (0 = off)"
    )
    date_after_days: float = Field(7.0, ge=0, description="days after a named date that still count as in it")
    date_decay_days: float = Field(7.0, gt=0, description="the date feature falls by e every N days further away")
    time_words_weight: float = Field(
        0.0,
        ge=0,
        description="weight of a memory in the window a question's relative time words name ('yesterday', "
        "'last week', 'two months ago', 'two sessions ago', 'before the migration'), resolved against the "
        "recall's asOf or now (0 = off, the default: 0.5 lowered LoCoMo's adversarial and BEAM's temporal "
        "and contradiction recall, bench/RESULTS.md)",
    )
    newer_first: bool = Field(
        True,
        description="when two recalled memories state different values for the same thing (read from "
        "their words, no model), the newer ranks just above the older and the older is marked replacedBy",
    )
    entity_links: bool = Field(
        False,
        description="on the write path, link each episode and fact to ENTITY records of the names, products, "
        "places and identifiers its author wrote (MENTIONS), found without a model (off by default: it adds "
        "records to every write for +0.002 LoCoMo recall@10, bench/RESULTS.md)",
    )
    entity_weight: float = Field(
        0.0,
        ge=0,
        description="share of a top hit's score lent to the memories that mention one of its entities, "
        "times how specific the entity is in the scope (0 = off, the default; 0.3 with entity_links measured)",
    )
    entity_seeds: int = Field(3, ge=0, le=20, description="top hits whose entities recall follows")
    entity_max_share: float = Field(
        0.05,
        gt=0,
        le=1,
        description="an entity mentioned by more than this share of the scope's memories is not followed",
    )
    candidate_pool: int = Field(200, description="rows each arm contributes before fusion")
    expand_top: int = Field(
        0,
        ge=0,
        le=10,
        description="follow relationships one hop from this many top hits (0 = off; a request's "
        "expand overrides it): linked facts and episodes compete for places, linked records are listed",
    )
    expand_weight: float = Field(0.5, ge=0, le=1, description="a linked memory's score: this share of its hit's")
    common_term_fraction: float = Field(
        1.0, description="the lexical arm skips words found in more than this share of the scope (1 = never)"
    )


class LLMSettings(BaseModel):
    """The optional chat model (any OpenAI-compatible ``/chat/completions`` endpoint) behind
    extraction, conflict judgement, reflection and consolidation (docs/assist.md)."""

    base_url: str | None = Field(
        None,
        description="the endpoint's base URL, e.g. http://127.0.0.1:11434/v1 (Ollama) or "
        "https://api.openai.com/v1; unset: model-assisted operations answer 501",
    )
    model: str = Field("", description="the model name the endpoint knows, e.g. qwen2.5:7b-instruct or gpt-4o-mini")
    api_key: SecretStr | None = Field(None, description="bearer key for the endpoint (hosted models)")
    timeout_seconds: float = Field(30.0, gt=0, description="seconds to wait for one answer")
    max_concurrency: int = Field(8, ge=1, le=64, description="calls in flight at once, per process")
    repair_attempts: int = Field(1, ge=0, le=3, description="extra turns that ask the model to fix unusable JSON")
    structured_output: Literal["json_schema", "json_object", "prompt"] = Field(
        "json_schema",
        description="how the JSON shape is asked for: json_schema (response_format with the "
        "schema), json_object (any JSON object), or prompt (the schema in the prompt only)",
    )
    temperature: float = Field(0.0, ge=0, le=2, description="sampling temperature")
    max_tokens: int = Field(1024, ge=16, description="answer length cap per call")
    prompt_cost_per_million: float = Field(0.0, ge=0, description="price of a million prompt tokens (0: local)")
    completion_cost_per_million: float = Field(0.0, ge=0, description="price of a million completion tokens")
    workers: int = Field(8, ge=0, le=64, description="threads of the background extraction queue (0: none)")
    worker_process: bool = Field(
        True,
        description="run the queue's threads in a process of their own beside the server (engram assist "
        "work), so recall never waits on them; false: threads inside the server process",
    )
    worker_nice: int = Field(
        10, ge=0, le=19, description="the worker process's niceness: on a busy machine the server (recall) runs first"
    )
    recall_first_ms: float = Field(
        100.0,
        ge=0,
        le=10_000,
        description="between the steps of a queued job, wait while the server is "
        "answering a recall; while recalls never stop, one step of the worker process passes per this many ms "
        "(0: never wait): on a small machine recall keeps its latency",
    )
    worker_idle: bool = Field(
        False,
        description="run the worker process at the kernel's idle priority (Linux SCHED_IDLE): it takes a CPU "
        "only when nothing else wants it; off by default: a worker descheduled while it holds SQLite's write lock "
        "would hold up the server's writes",
    )
    job_attempts: int = Field(5, ge=1, le=50, description="tries of a queued job before it is marked failed")
    job_backoff_seconds: float = Field(
        2.0, gt=0, description="wait before a failed job's first retry; doubles each time, at most ten minutes"
    )
    job_lease_seconds: float = Field(300.0, gt=0, description="a running job not finished by then is taken again")

    @property
    def configured(self) -> bool:
        """True when a chat model is set."""
        return bool(self.base_url and self.model)


class WebhookSettings(BaseModel):
    """Delivering the change feed to webhooks (docs/operations.md#the-change-feed-and-webhooks)."""

    deliver: bool = Field(
        True, description="this server delivers webhooks (run one deliverer per database: set false on the others)"
    )
    key_file: Path | None = Field(
        None,
        description="the key every endpoint's signing secret is derived from (default: webhooks.key in home, "
        "made on first use); the database holds only a salt per endpoint",
    )
    batch_size: int = Field(100, ge=1, le=1000, description="changes per delivery at most")
    attempts: int = Field(15, ge=1, le=100, description="tries of a delivery before it becomes a dead letter")
    backoff_seconds: float = Field(
        2.0, gt=0, description="wait before a failed delivery's first retry; doubles each time, up to the cap"
    )
    max_backoff_seconds: float = Field(3600.0, gt=0, description="the longest wait between two tries")
    timeout_seconds: float = Field(
        10.0,
        gt=0,
        description="seconds an endpoint has to answer a delivery: connecting, sending, its status (not a name lookup)",
    )
    poll_seconds: float = Field(0.5, gt=0, description="how often the deliverer looks for new changes when idle")
    concurrency: int = Field(
        4,
        ge=1,
        le=64,
        description="endpoints delivered to at once (one delivery each; one tenant's all but one at most, from 2)",
    )


class Settings(BaseSettings):
    """Every EngramDB setting, with its default."""

    model_config = SettingsConfigDict(env_prefix="ENGRAM_", env_nested_delimiter="__")

    home: Path = Field(
        Path(".engram"),
        description="data folder: the SQLite files (one per tenant), the audit key and anchors; relative to "
        "the working directory",
    )
    database_url: str | None = Field(
        None,
        description="storage URL: postgresql://user@host/db puts every tenant in PostgreSQL + pgvector (the "
        "postgres extra); unset: SQLite under home",
    )
    pg_schema: str = Field("engram", description="PostgreSQL schema of EngramDB's tables")
    pg_bin: str | None = Field(None, description="folder of pg_dump and pg_restore for backups (default: PATH)")
    host: str = Field("127.0.0.1", description="address the server listens on")
    port: int = Field(8377, description="port the server listens on")
    embedder: str = Field(
        "auto",
        description="'auto' (a data folder keeps the local model its memories were embedded with; a new one "
        "gets 'minilm-fast' on an x86 CPU with AVX2 or VNNI, else 'minilm'), 'minilm' (all-MiniLM-L6-v2 as int8 ONNX, "
        "installed from PyPI: no download at run time), 'minilm-fast' (the same model on int8 activations, "
        "derived at first load and cached: a query embeds in about 0.6 of the time, with vectors of its "
        "own, so run engram reembed after switching), 'hashing[:DIM]' (for tests) or 'openai:BASE_URL|MODEL' "
        "(with embedder_api_key)",
    )
    embedder_api_key: str | None = Field(None, description="bearer key for an openai: embedder")
    sqlite_synchronous: Literal["OFF", "NORMAL", "FULL", "EXTRA"] = Field(
        "NORMAL",
        description="SQLite synchronous pragma: NORMAL, an acknowledged write survives a killed process; "
        "FULL, it also survives power loss (a misspelt value is refused at start, never run as NORMAL)",
    )
    max_body_bytes: int = Field(
        16 * 1024 * 1024,
        ge=1024,
        description="largest request body read, in bytes (413 past it; a full batch of 100 episodes fits)",
    )
    rate_limit_per_second: float = Field(
        0, ge=0, description="requests a second each key may make on average (429 with Retry-After past it; 0 = off)"
    )
    rate_limit_burst: int = Field(100, ge=1, description="requests a key may make at once before the rate applies")
    max_in_flight: int = Field(
        32,
        ge=0,
        description="requests served at once; past it a request is refused at once with 503 and "
        "Retry-After instead of queueing, unless its key has none in flight (up to 1.5 times this, rounded "
        "up) or its tenant has none (up to twice this); 0 = no limit",
    )
    recall_threads: int = Field(
        0,
        ge=0,
        le=256,
        description="Recalls (REST, MCP over HTTP and the dashboard's playground) run at once, each in a worker "
        "thread of their own (0: one per CPU core with a local model; with an openai: embedder, as many as the "
        "shared pool serves); more wait their turn without holding a thread, the tenants in turn and each "
        "tenant's keys in turn",
    )
    embed_batch_size: int = Field(64, description="rows embedded per batch by the worker")
    malloc_arenas: int = Field(
        2,
        ge=0,
        le=64,
        description="glibc malloc arenas of `engram serve` (0: glibc's default, 8 per core): each "
        "thread that gets its own arena keeps its peak, ~300 MB more under load at 10,000 memories",
    )
    gil_switch_ms: float = Field(
        0.5,
        gt=0,
        le=100,
        description="how long a Python thread of `engram serve` may hold the interpreter while another waits "
        "for it (ms; Python's own default is 5): a request that returns from SQLite or the model waits at "
        "most this long for a busy thread that holds it",
    )
    memory_mb: float = Field(
        1024,
        gt=0,
        description="memory the in-memory scope copies may hold (MB); least recently used scopes are "
        "dropped beyond it and reloaded on their next recall",
    )
    ann_min_rows: int = Field(
        200_000,
        ge=1,
        description="ready vectors in one scope before its vector arm searches k-means lists "
        "(approximate) instead of every row (exact)",
    )
    ann_probe_share: float = Field(0.05, gt=0, le=1, description="share of a large scope's lists a query scans")
    pg_copy_min_rows: int = Field(
        10_000,
        ge=1,
        description="PostgreSQL: memories in one scope before it is answered from an in-memory copy "
        "(BM25 and int8 vectors) instead of a scan of its rows per query",
    )
    pg_statement_timeout_seconds: float = Field(
        5.0,
        gt=0,
        description="PostgreSQL: a statement of a request (or of a job's ordinary step) running longer is "
        "cancelled; the request answers 503 query_timeout with Retry-After, and its connection is free again",
    )
    pg_maintenance_timeout_seconds: float = Field(
        3600.0,
        gt=0,
        description="PostgreSQL: the same for maintenance work: the aging sweep, re-embedding, imports, "
        "exports, migrations, VACUUM, warming the scope copies at start (pg_dump and pg_restore set their own)",
    )
    pg_search_connections: int = Field(
        2,
        ge=1,
        description="PostgreSQL: where-queries (record searches, counts, aggregates, deletes by where) hold at "
        "most this many of the server's 8 database connections at once, one scope at most half of them (at least "
        "one), so the rest stay free for recall and writes; past it a search waits up to the statement timeout, "
        "then answers 503 overloaded",
    )
    embed_poll_seconds: float = Field(0.5, description="worker poll interval when idle")
    aging_interval_seconds: float = Field(3600.0, gt=0, description="how often the aging job sweeps every tenant")
    usage_flush_seconds: float = Field(5.0, gt=0, description="how often recall's use counts are written")
    query_cache_size: int = Field(
        1024, ge=0, description="recent recall queries whose vectors are kept, by model and text (0 = off)"
    )
    audit_key_file: Path | None = Field(
        None,
        description="the key that MACs the audit chain's anchors (default: audit.key in home; keep it "
        "where the database's writer cannot read it)",
    )
    audit_anchor_dir: Path | None = Field(
        None,
        description="where the audit chain's heads are anchored, one append-only file per tenant "
        "(default: audit-anchors in home)",
    )
    retrieval: RetrievalSettings = Field(
        default_factory=RetrievalSettings, description="recall's tuning knobs (fusion, features, candidate pools)"
    )
    llm: LLMSettings = Field(
        default_factory=LLMSettings, description="the optional chat model behind model-assisted memory"
    )
    webhooks: WebhookSettings = Field(
        default_factory=WebhookSettings, description="delivering the change feed to webhooks"
    )

    @field_validator("sqlite_synchronous", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:  # "full" means FULL; "FUL" is refused, not run as NORMAL
        return value.upper() if isinstance(value, str) else value

    def store_options(self) -> dict[str, object]:
        """Options for ``open_store`` beside the URL."""
        copies = {
            "memory_mb": self.memory_mb,
            "ann_min_rows": self.ann_min_rows,
            "ann_probe_share": self.ann_probe_share,
        }
        if self.database_url:
            return {
                "schema": self.pg_schema,
                "copy_min_rows": self.pg_copy_min_rows,
                "statement_timeout": self.pg_statement_timeout_seconds,
                "maintenance_timeout": self.pg_maintenance_timeout_seconds,
                "search_connections": self.pg_search_connections,
                **copies,
            }
        return {"synchronous": self.sqlite_synchronous, **copies}

    def recalls_file(self) -> Path:
        """The count of recalls in flight that the server shares with its extraction workers."""
        return self.home / "run" / "recalls-in-flight"

    def anchor_paths(self) -> tuple[Path, Path]:
        """The audit anchors' folder (by default one per database: SQLite's, or each PostgreSQL schema's)
        and key file."""
        default = self.home / "audit-anchors" / (f"pg-{self.pg_schema}" if self.database_url else "sqlite")
        return (self.audit_anchor_dir or default, self.audit_key_file or self.home / "audit.key")

    def webhook_key_path(self) -> Path:
        """The file holding the key that webhook secrets are derived from."""
        return self.webhooks.key_file or self.home / "webhooks.key"

    def storage_url(self) -> str:
        """Return the storage URL (the embedded SQLite default when none is set)."""
        return self.database_url or f"sqlite:///{self.home}"


def tune_process() -> None:
    """Entry-point tuning: one BLAS thread.

    Recall multiplies one query vector by the scope's matrix; on a small machine a second BLAS
    thread waits on the scheduler more than it computes (measured: 10k x 384 took 12 ms on two
    threads under load, 0.8 ms on one), and its spinning slows the embedder beside it.
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
