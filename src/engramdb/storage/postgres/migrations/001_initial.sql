-- EngramDB on PostgreSQL: every tenant's rows in one set of tables, isolated by row-level
-- security on the `tenant` column (the Citus distribution column when scaled out).
-- {schema} is replaced by the configured schema name before this runs.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE {schema}.tenants (
    name       TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
);

CREATE TABLE {schema}.meta (
    tenant TEXT NOT NULL,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (tenant, key)
);

CREATE TABLE {schema}.memories (
    tenant                 TEXT    NOT NULL,
    rowid                  BIGINT  GENERATED ALWAYS AS IDENTITY,
    source                 TEXT    NOT NULL CHECK (source IN ('EPISODE', 'MEMORY_FACT')),
    memory_id              TEXT    NOT NULL,
    scope_key              TEXT    NOT NULL,
    agent_id               TEXT    NOT NULL,
    profile_id             TEXT    NOT NULL,
    privacy_scope          TEXT    NOT NULL,
    participant_scope_hash TEXT    NOT NULL,
    sandbox_eligible       BOOLEAN NOT NULL,
    session_id             TEXT,
    subject_key            TEXT,
    kind                   TEXT,
    text                   TEXT    NOT NULL,
    embed_text             TEXT    NOT NULL,
    lexical_body           TEXT    NOT NULL,
    tsv                    TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', lexical_body)) STORED,
    trust_class            TEXT    NOT NULL,
    origin                 TEXT    NOT NULL,
    status                 TEXT    NOT NULL,
    confidence             DOUBLE PRECISION NOT NULL,
    observed_at            TEXT    NOT NULL,
    valid_from             TEXT,
    valid_until            TEXT,
    recorded_at            TEXT    NOT NULL,
    active_from            TEXT,
    retired_at             TEXT,
    supersedes_id          TEXT,
    superseded_by_id       TEXT,
    status_reason          TEXT,
    event_json             TEXT    NOT NULL,
    change_seq             BIGINT  NOT NULL,
    embed_state            TEXT    NOT NULL DEFAULT 'pending'
                                   CHECK (embed_state IN ('pending', 'ready', 'failed')),
    embed_error            TEXT,
    embed_attempts         INTEGER NOT NULL DEFAULT 0,
    embed_next_at          TEXT,
    embed_model            TEXT,
    embedding              vector,
    PRIMARY KEY (tenant, rowid),
    -- Idempotence is a constraint: eventIds of two participants can collide.
    UNIQUE (tenant, scope_key, source, memory_id)
);
CREATE INDEX memories_by_scope ON {schema}.memories (tenant, scope_key, status);
CREATE INDEX memories_by_subject ON {schema}.memories (tenant, scope_key, subject_key, kind, status);
CREATE INDEX memories_by_supersedes ON {schema}.memories (tenant, scope_key, supersedes_id);
CREATE INDEX memories_by_superseded_by ON {schema}.memories (tenant, scope_key, superseded_by_id);
CREATE INDEX memories_by_expiry ON {schema}.memories (tenant, valid_until) WHERE status = 'active';
CREATE INDEX memories_embedding_due ON {schema}.memories (tenant, embed_state, embed_next_at)
    WHERE embed_state != 'ready';
CREATE INDEX memories_lexical ON {schema}.memories USING gin (tsv);

CREATE TABLE {schema}.tombstones (
    tenant       TEXT NOT NULL,
    tombstone_id TEXT NOT NULL,
    scope_key    TEXT NOT NULL,
    subject_key  TEXT NOT NULL,
    kind         TEXT NOT NULL,
    value_hash   TEXT NOT NULL,
    fact_id      TEXT,
    reason       TEXT,
    created_at   TEXT NOT NULL,
    actor_key_id TEXT,
    lifted_at    TEXT,
    lifted_by    TEXT,
    lift_reason  TEXT,
    PRIMARY KEY (tenant, tombstone_id)
);
CREATE UNIQUE INDEX tombstones_unlifted
    ON {schema}.tombstones (tenant, scope_key, subject_key, kind, value_hash) WHERE lifted_at IS NULL;

CREATE TABLE {schema}.api_keys (
    tenant      TEXT NOT NULL,
    key_id      TEXT NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('agent', 'host', 'reviewer', 'admin')),
    grant_json  TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    label       TEXT,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT,
    PRIMARY KEY (tenant, key_id)
);

CREATE TABLE {schema}.audit_log (
    tenant        TEXT   NOT NULL,
    seq           BIGINT NOT NULL,
    at            TEXT   NOT NULL,
    action        TEXT   NOT NULL,
    actor_key_id  TEXT,
    actor_role    TEXT,
    target_kind   TEXT,
    target_id     TEXT,
    scope_key     TEXT,
    before_digest TEXT,
    after_digest  TEXT,
    reason        TEXT,
    prev_hash     TEXT   NOT NULL,
    hash          TEXT   NOT NULL,
    PRIMARY KEY (tenant, seq)
);
CREATE FUNCTION {schema}.refuse_audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END $$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON {schema}.audit_log
    FOR EACH ROW EXECUTE FUNCTION {schema}.refuse_audit_change();

-- Row-level security: a session sees only the tenant named by `engram.tenant`. A query that
-- forgets the tenant, or names another tenant's scope, returns nothing.
DO $$
DECLARE t TEXT;
BEGIN
    FOREACH t IN ARRAY ARRAY['meta', 'memories', 'tombstones', 'api_keys', 'audit_log'] LOOP
        EXECUTE format('ALTER TABLE {schema}.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE {schema}.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON {schema}.%I '
            'USING (tenant = current_setting(''engram.tenant'', true)) '
            'WITH CHECK (tenant = current_setting(''engram.tenant'', true))', t);
    END LOOP;
END $$;

-- The role the server works as: no superuser, no BYPASSRLS, so the policies above bind it.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'engram_app') THEN
        CREATE ROLE engram_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
    END IF;
END $$;
GRANT engram_app TO CURRENT_USER;
GRANT USAGE ON SCHEMA {schema} TO engram_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO engram_app;
GRANT EXECUTE ON FUNCTION {schema}.refuse_audit_change() TO engram_app;
REVOKE UPDATE, DELETE ON {schema}.audit_log FROM engram_app;
