-- When each scope that holds memories was last written, kept by the writes themselves: listing a
-- tenant's scopes newest first read every memory of the tenant (its counts, grouped) on each call.
CREATE TABLE IF NOT EXISTS scope_activity (
    scope_key        TEXT PRIMARY KEY,
    last_recorded_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS scope_activity_by_time ON scope_activity (last_recorded_at, scope_key);
-- A host key's scopes (its agent and profile) found without walking every scope of the tenant.
CREATE INDEX IF NOT EXISTS scopes_by_agent ON scopes (agent_id, profile_id);
CREATE TRIGGER IF NOT EXISTS memories_scope_activity AFTER INSERT ON memories
BEGIN
    INSERT INTO scope_activity VALUES (NEW.scope_key, NEW.recorded_at)
        ON CONFLICT (scope_key) DO UPDATE SET last_recorded_at = excluded.last_recorded_at
        WHERE excluded.last_recorded_at > scope_activity.last_recorded_at;
END;
-- A scope whose last memory is deleted (an erasure, a forgotten participant) is listed no more.
CREATE TRIGGER IF NOT EXISTS memories_scope_emptied AFTER DELETE ON memories
WHEN NOT EXISTS (SELECT 1 FROM memories WHERE scope_key = OLD.scope_key)
BEGIN
    DELETE FROM scope_activity WHERE scope_key = OLD.scope_key;
END;
INSERT OR IGNORE INTO scope_activity SELECT scope_key, max(recorded_at) FROM memories GROUP BY scope_key;
