-- A fact's sourceEventId becomes a real DERIVED_FROM link to its episode (by eventId, or by the
-- host's turn id the episode carries); the column lets an episode that arrives later find its facts.
ALTER TABLE {schema}.memories ADD COLUMN source_event_id TEXT;
CREATE INDEX memories_by_source_event ON {schema}.memories (tenant, scope_key, source_event_id)
    WHERE source_event_id IS NOT NULL;
-- Row-level security is forced and no tenant is set while migrating (see 004): lift it for the
-- backfill, or an owner that is not a superuser would see no row.
ALTER TABLE {schema}.memories NO FORCE ROW LEVEL SECURITY;
ALTER TABLE {schema}.relationships NO FORCE ROW LEVEL SECURITY;
UPDATE {schema}.memories SET source_event_id = event_json::jsonb ->> 'sourceEventId';
INSERT INTO {schema}.relationships (tenant, scope_key, type, source_kind, source, target_kind, target,
                                    properties_json, created_at)
SELECT f.tenant, f.scope_key, 'DERIVED_FROM', 'MEMORY_FACT', f.rowid, 'EPISODE', e.rowid, '{}', f.recorded_at
FROM {schema}.memories f
JOIN {schema}.memories e ON e.tenant = f.tenant AND e.scope_key = f.scope_key AND e.source = 'EPISODE'
    AND (e.memory_id = f.source_event_id OR e.source_event_id = f.source_event_id)
WHERE f.source = 'MEMORY_FACT' AND f.source_event_id IS NOT NULL
ON CONFLICT DO NOTHING;
ALTER TABLE {schema}.relationships FORCE ROW LEVEL SECURITY;
ALTER TABLE {schema}.memories FORCE ROW LEVEL SECURITY;
