-- When each scope that holds memories was last written, kept by the writes themselves: listing a
-- tenant's scopes newest first read every memory of the tenant (its counts, grouped) on each call.
-- Statement triggers: a batch or an import names each scope once, an erasure looks once per scope.
-- Writers of a tenant already take its change_seq row first, so a scope's row adds no lock order.
CREATE TABLE {schema}.scope_activity (
    tenant           TEXT NOT NULL,
    scope_key        TEXT NOT NULL,
    last_recorded_at TEXT NOT NULL,
    PRIMARY KEY (tenant, scope_key)
);
CREATE INDEX scope_activity_by_time ON {schema}.scope_activity (tenant, last_recorded_at, scope_key);
-- A host key's scopes (its agent and profile) found without walking every scope of the tenant.
CREATE INDEX scopes_by_agent ON {schema}.scopes (tenant, agent_id, profile_id);
CREATE FUNCTION {schema}.scope_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {schema}.scope_activity AS a
        SELECT tenant, scope_key, max(recorded_at) FROM written GROUP BY tenant, scope_key
    ON CONFLICT (tenant, scope_key) DO UPDATE SET last_recorded_at = EXCLUDED.last_recorded_at
        WHERE EXCLUDED.last_recorded_at > a.last_recorded_at;
    RETURN NULL;
END $$;
CREATE TRIGGER memories_scope_activity AFTER INSERT ON {schema}.memories
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION {schema}.scope_written();
-- A scope whose last memory is deleted (an erasure, a forgotten participant) is listed no more.
CREATE FUNCTION {schema}.scope_emptied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM {schema}.scope_activity a USING (SELECT DISTINCT tenant, scope_key FROM gone) g
    WHERE a.tenant = g.tenant AND a.scope_key = g.scope_key
        AND NOT EXISTS (SELECT 1 FROM {schema}.memories m WHERE m.tenant = g.tenant AND m.scope_key = g.scope_key);
    RETURN NULL;
END $$;
CREATE TRIGGER memories_scope_emptied AFTER DELETE ON {schema}.memories
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION {schema}.scope_emptied();

-- The scopes written before this (row-level security is lifted for the backfill, as in 014).
ALTER TABLE {schema}.memories NO FORCE ROW LEVEL SECURITY;
INSERT INTO {schema}.scope_activity
    SELECT tenant, scope_key, max(recorded_at) FROM {schema}.memories GROUP BY tenant, scope_key;
ALTER TABLE {schema}.memories FORCE ROW LEVEL SECURITY;
ALTER TABLE {schema}.scope_activity ENABLE ROW LEVEL SECURITY;
ALTER TABLE {schema}.scope_activity FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON {schema}.scope_activity
    USING (tenant = current_setting('engram.tenant', true))
    WITH CHECK (tenant = current_setting('engram.tenant', true));
GRANT SELECT, INSERT, UPDATE, DELETE ON {schema}.scope_activity TO engram_app;
