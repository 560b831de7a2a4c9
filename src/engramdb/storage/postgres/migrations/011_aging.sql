-- Memory that ages: importance and pins set by a person, and how often recall used each row.
ALTER TABLE {schema}.memories ADD COLUMN importance REAL;
ALTER TABLE {schema}.memories ADD COLUMN pinned INTEGER DEFAULT 0;
ALTER TABLE {schema}.memories ADD COLUMN use_count INTEGER DEFAULT 0;
ALTER TABLE {schema}.memories ADD COLUMN last_used_at TEXT;
CREATE INDEX memories_by_recorded ON {schema}.memories (tenant, recorded_at) WHERE status = 'active';
