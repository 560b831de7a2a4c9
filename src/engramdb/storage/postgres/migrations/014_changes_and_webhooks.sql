-- The change feed and its webhooks (storage/feed/port.py says what each table is for).
-- Every scope that ever held a memory or a record, by its five fields: the feed tells who may read
-- a change by them, also once the scope is erased. Names only, never text; never updated.
CREATE TABLE {schema}.scopes (
    tenant                 TEXT    NOT NULL,
    scope_key              TEXT    NOT NULL,
    agent_id               TEXT    NOT NULL,
    profile_id             TEXT    NOT NULL,
    privacy_scope          TEXT    NOT NULL,
    participant_scope_hash TEXT    NOT NULL,
    sandbox_eligible       BOOLEAN NOT NULL,
    PRIMARY KEY (tenant, scope_key)
);
CREATE FUNCTION {schema}.name_scope() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {schema}.scopes VALUES (NEW.tenant, NEW.scope_key, NEW.agent_id, NEW.profile_id,
        NEW.privacy_scope, NEW.participant_scope_hash, NEW.sandbox_eligible::boolean) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER memories_name_scope AFTER INSERT ON {schema}.memories
    FOR EACH ROW EXECUTE FUNCTION {schema}.name_scope();
CREATE TRIGGER records_name_scope AFTER INSERT ON {schema}.records
    FOR EACH ROW EXECUTE FUNCTION {schema}.name_scope();

CREATE TABLE {schema}.webhooks (
    tenant            TEXT    NOT NULL,
    webhook_id        TEXT    NOT NULL,
    url               TEXT    NOT NULL,
    kinds_json        TEXT    NOT NULL,
    secret_salt       TEXT    NOT NULL,
    secret_check      TEXT    NOT NULL,
    label             TEXT,
    created_at        TEXT    NOT NULL,
    cursor            BIGINT  NOT NULL,
    delivered         BIGINT  NOT NULL DEFAULT 0,
    last_delivered_at TEXT,
    last_error        TEXT,
    PRIMARY KEY (tenant, webhook_id)
);
CREATE TABLE {schema}.webhook_deliveries (
    tenant      TEXT    NOT NULL,
    delivery_id TEXT    NOT NULL,
    webhook_id  TEXT    NOT NULL,
    after_seq   BIGINT  NOT NULL,
    through_seq BIGINT  NOT NULL,
    changes     INTEGER NOT NULL,
    body        TEXT    NOT NULL,
    state       TEXT    NOT NULL CHECK (state IN ('pending', 'dead')),
    attempts    INTEGER NOT NULL,
    next_at     TEXT    NOT NULL,
    last_error  TEXT,
    last_status INTEGER,
    created_at  TEXT    NOT NULL,
    dead_at     TEXT,
    PRIMARY KEY (tenant, delivery_id)
);
CREATE INDEX webhook_deliveries_next ON {schema}.webhook_deliveries (tenant, webhook_id, state, after_seq);

DO $$
DECLARE t TEXT;
BEGIN
    FOREACH t IN ARRAY ARRAY['scopes', 'webhooks', 'webhook_deliveries'] LOOP
        EXECUTE format('ALTER TABLE {schema}.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE {schema}.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON {schema}.%I '
            'USING (tenant = current_setting(''engram.tenant'', true)) '
            'WITH CHECK (tenant = current_setting(''engram.tenant'', true))', t);
    END LOOP;
END $$;
GRANT SELECT, INSERT ON {schema}.scopes TO engram_app;  -- a scope's name is never changed or removed
GRANT SELECT, INSERT, UPDATE, DELETE ON {schema}.webhooks, {schema}.webhook_deliveries TO engram_app;

-- The scopes written before this (row-level security is forced and no tenant is set while
-- migrating: lifted for the backfill, as in 007).
ALTER TABLE {schema}.memories NO FORCE ROW LEVEL SECURITY;
ALTER TABLE {schema}.records NO FORCE ROW LEVEL SECURITY;
ALTER TABLE {schema}.scopes NO FORCE ROW LEVEL SECURITY;
INSERT INTO {schema}.scopes
    SELECT tenant, scope_key, agent_id, profile_id, privacy_scope, participant_scope_hash, sandbox_eligible::boolean
    FROM {schema}.memories
    UNION SELECT tenant, scope_key, agent_id, profile_id, privacy_scope, participant_scope_hash, sandbox_eligible::boolean
    FROM {schema}.records
ON CONFLICT DO NOTHING;
ALTER TABLE {schema}.scopes FORCE ROW LEVEL SECURITY;
ALTER TABLE {schema}.records FORCE ROW LEVEL SECURITY;
ALTER TABLE {schema}.memories FORCE ROW LEVEL SECURITY;
