-- A superseded fact stops holding (valid time) where its successor starts: record it, so
-- "what was true at T" (validAt) returns the fact that held then. validUntil stays as written.
ALTER TABLE {schema}.memories ADD COLUMN invalid_at TEXT;
-- Row-level security is forced on the table, and no tenant is set while migrating: without
-- lifting it for this statement, an owner that is not a superuser would update no row at all.
ALTER TABLE {schema}.memories NO FORCE ROW LEVEL SECURITY;
UPDATE {schema}.memories m SET invalid_at = s.valid_from
FROM {schema}.memories s
WHERE m.source = 'MEMORY_FACT' AND m.superseded_by_id IS NOT NULL
  AND s.tenant = m.tenant AND s.scope_key = m.scope_key AND s.source = 'MEMORY_FACT'
  AND s.memory_id = m.superseded_by_id;
ALTER TABLE {schema}.memories FORCE ROW LEVEL SECURITY;
