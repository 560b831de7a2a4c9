-- Model-assisted memory (docs/assist.md): links with the model's verdicts, the extraction
-- queue, and the ledger of model calls. Created with the file, or added to an older one.
CREATE TABLE IF NOT EXISTS model_links (
    link_id        TEXT PRIMARY KEY,
    scope_key      TEXT NOT NULL,
    link_type      TEXT NOT NULL,   -- SUPERSEDES, REFINES, COEXISTS, CONSOLIDATES, DERIVED_FROM
    from_id        TEXT NOT NULL,   -- the fact a model derived or judged
    to_id          TEXT NOT NULL,   -- the fact or episode it points at
    to_source      TEXT NOT NULL,
    state          TEXT NOT NULL,   -- applied, proposed, refused, rejected, undone
    verdict        TEXT,
    confidence     REAL,
    reason         TEXT,
    prompt_version TEXT,
    model          TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS model_links_from ON model_links (scope_key, from_id);
CREATE INDEX IF NOT EXISTS model_links_to ON model_links (scope_key, to_id);

CREATE TABLE IF NOT EXISTS model_jobs (
    job_id       TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    scope_key    TEXT NOT NULL,
    scope_json   TEXT NOT NULL,
    input_json   TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    next_at      TEXT NOT NULL,
    error        TEXT,
    result_json  TEXT,
    actor_key_id TEXT,
    actor_role   TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    started_at   TEXT,             -- when its current (or last) run began
    finished_at  TEXT,
    run_cpu_ms   REAL              -- CPU time its last run took in its worker thread
);
CREATE INDEX IF NOT EXISTS model_jobs_due ON model_jobs (state, next_at);
CREATE INDEX IF NOT EXISTS model_jobs_by_scope ON model_jobs (scope_key, created_at);

CREATE TABLE IF NOT EXISTS model_calls (
    seq               INTEGER PRIMARY KEY,
    at                TEXT NOT NULL,
    purpose           TEXT NOT NULL,
    model             TEXT NOT NULL,
    prompt_version    TEXT NOT NULL,
    scope_key         TEXT,
    job_id            TEXT,
    actor_key_id      TEXT,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    estimated         INTEGER NOT NULL,
    cost              REAL NOT NULL,
    latency_ms        REAL NOT NULL,
    outcome           TEXT NOT NULL,
    error             TEXT
);
CREATE INDEX IF NOT EXISTS model_calls_by_time ON model_calls (at);
