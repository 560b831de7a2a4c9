-- The knowledge plane: records under UPPER_CASE labels, their typed values, relationships
-- between records and memories, each record's earlier properties, and the vectors of its texts.
CREATE TABLE {schema}.records (
    tenant                 TEXT    NOT NULL,
    rowid                  BIGINT  GENERATED ALWAYS AS IDENTITY,
    record_id              TEXT    NOT NULL,
    scope_key              TEXT    NOT NULL,
    agent_id               TEXT    NOT NULL,
    profile_id             TEXT    NOT NULL,
    privacy_scope          TEXT    NOT NULL,
    participant_scope_hash TEXT    NOT NULL,
    sandbox_eligible       BOOLEAN NOT NULL,
    label                  TEXT    NOT NULL,
    properties_json        TEXT    NOT NULL,
    merge_key              TEXT,
    origin                 TEXT    NOT NULL,
    version                INTEGER NOT NULL,
    created_at             TEXT    NOT NULL,
    updated_at             TEXT    NOT NULL,
    PRIMARY KEY (tenant, rowid),
    UNIQUE (tenant, scope_key, record_id),
    -- Idempotent upserts by mergeBy are a constraint, not a check (NULLs never collide).
    UNIQUE (tenant, scope_key, label, merge_key)
);
CREATE INDEX records_by_label ON {schema}.records (tenant, scope_key, label, created_at);
CREATE TABLE {schema}.record_values (
    tenant       TEXT    NOT NULL,
    record       BIGINT  NOT NULL,
    scope_key    TEXT    NOT NULL,
    label        TEXT    NOT NULL,  -- the record's (labels never change): a related set needs no join
    name         TEXT    NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('string', 'number', 'boolean', 'datetime')),
    text_key     TEXT,
    text_value   TEXT,
    text_fold    TEXT,
    number_value DOUBLE PRECISION
);
CREATE INDEX record_values_text ON {schema}.record_values (tenant, scope_key, label, name, kind, text_key);
CREATE INDEX record_values_number ON {schema}.record_values (tenant, scope_key, label, name, kind, number_value);
-- The planner's row estimates for a value (this label, property and text) assume its columns
-- independent; without the statistics of their combinations it misjudges a where by orders of magnitude.
CREATE STATISTICS {schema}.record_values_by_value (dependencies, mcv)
    ON tenant, scope_key, label, name, kind, text_key FROM {schema}.record_values;
CREATE INDEX record_values_of ON {schema}.record_values (tenant, record, name, kind, text_key, number_value);
CREATE TABLE {schema}.relationships (
    tenant          TEXT    NOT NULL,
    rowid           BIGINT  GENERATED ALWAYS AS IDENTITY,
    scope_key       TEXT    NOT NULL,
    type            TEXT    NOT NULL,
    source_kind     TEXT    NOT NULL CHECK (source_kind IN ('RECORD', 'EPISODE', 'MEMORY_FACT')),
    source          BIGINT  NOT NULL,
    target_kind     TEXT    NOT NULL CHECK (target_kind IN ('RECORD', 'EPISODE', 'MEMORY_FACT')),
    target          BIGINT  NOT NULL,
    properties_json TEXT    NOT NULL,
    created_at      TEXT    NOT NULL,
    PRIMARY KEY (tenant, rowid),
    UNIQUE (tenant, scope_key, type, source_kind, source, target_kind, target)
);
CREATE INDEX relationships_out ON {schema}.relationships (tenant, scope_key, source_kind, source, type, target_kind,
                                                           target);
CREATE INDEX relationships_in ON {schema}.relationships (tenant, scope_key, target_kind, target, type, source_kind,
                                                          source);
CREATE TABLE {schema}.record_history (
    tenant          TEXT    NOT NULL,
    record          BIGINT  NOT NULL,
    version         INTEGER NOT NULL,
    properties_json TEXT    NOT NULL,
    replaced_at     TEXT    NOT NULL,
    PRIMARY KEY (tenant, record, version)
);
CREATE TABLE {schema}.record_vectors (
    tenant         TEXT    NOT NULL,
    rowid          BIGINT  GENERATED ALWAYS AS IDENTITY,
    record         BIGINT  NOT NULL,
    scope_key      TEXT    NOT NULL,
    name           TEXT    NOT NULL,
    text           TEXT    NOT NULL,
    embed_state    TEXT    NOT NULL DEFAULT 'pending' CHECK (embed_state IN ('pending', 'ready', 'failed')),
    embed_error    TEXT,
    embed_attempts INTEGER NOT NULL DEFAULT 0,
    embed_next_at  TEXT,
    embed_model    TEXT,
    embedding      vector,
    PRIMARY KEY (tenant, rowid),
    UNIQUE (tenant, record, name)
);
CREATE INDEX record_vectors_due ON {schema}.record_vectors (tenant, embed_state, embed_next_at)
    WHERE embed_state != 'ready';
CREATE INDEX record_vectors_of ON {schema}.record_vectors (tenant, scope_key, name);

DO $$
DECLARE t TEXT;
BEGIN
    FOREACH t IN ARRAY ARRAY['records', 'record_values', 'relationships', 'record_history', 'record_vectors'] LOOP
        EXECUTE format('ALTER TABLE {schema}.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE {schema}.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON {schema}.%I '
            'USING (tenant = current_setting(''engram.tenant'', true)) '
            'WITH CHECK (tenant = current_setting(''engram.tenant'', true))', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON {schema}.%I TO engram_app', t);
    END LOOP;
END $$;
