-- Model-assisted memory (docs/assist.md): links with the model's verdicts, the extraction
-- queue, and the ledger of model calls. `tenant` is filled from the session's engram.tenant.
CREATE TABLE {schema}.model_links (
    tenant         TEXT NOT NULL DEFAULT current_setting('engram.tenant', true),
    link_id        TEXT NOT NULL,
    scope_key      TEXT NOT NULL,
    link_type      TEXT NOT NULL,
    from_id        TEXT NOT NULL,
    to_id          TEXT NOT NULL,
    to_source      TEXT NOT NULL,
    state          TEXT NOT NULL,
    verdict        TEXT,
    confidence     DOUBLE PRECISION,
    reason         TEXT,
    prompt_version TEXT,
    model          TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    PRIMARY KEY (tenant, link_id)
);
CREATE INDEX model_links_from ON {schema}.model_links (tenant, scope_key, from_id);
CREATE INDEX model_links_to ON {schema}.model_links (tenant, scope_key, to_id);

CREATE TABLE {schema}.model_jobs (
    tenant       TEXT NOT NULL DEFAULT current_setting('engram.tenant', true),
    job_id       TEXT NOT NULL,
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
    started_at   TEXT,
    finished_at  TEXT,
    run_cpu_ms   DOUBLE PRECISION,
    PRIMARY KEY (tenant, job_id)
);
CREATE INDEX model_jobs_due ON {schema}.model_jobs (tenant, state, next_at);
CREATE INDEX model_jobs_by_scope ON {schema}.model_jobs (tenant, scope_key, created_at);

CREATE TABLE {schema}.model_calls (
    tenant            TEXT NOT NULL DEFAULT current_setting('engram.tenant', true),
    seq               BIGINT GENERATED ALWAYS AS IDENTITY,
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
    cost              DOUBLE PRECISION NOT NULL,
    latency_ms        DOUBLE PRECISION NOT NULL,
    outcome           TEXT NOT NULL,
    error             TEXT,
    PRIMARY KEY (tenant, seq)
);
CREATE INDEX model_calls_by_time ON {schema}.model_calls (tenant, at);

DO $$
DECLARE t TEXT;
BEGIN
    FOREACH t IN ARRAY ARRAY['model_links', 'model_jobs', 'model_calls'] LOOP
        EXECUTE format('ALTER TABLE {schema}.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE {schema}.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON {schema}.%I '
            'USING (tenant = current_setting(''engram.tenant'', true)) '
            'WITH CHECK (tenant = current_setting(''engram.tenant'', true))', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON {schema}.%I TO engram_app', t);
    END LOOP;
END $$;
REVOKE UPDATE ON {schema}.model_calls FROM engram_app;
