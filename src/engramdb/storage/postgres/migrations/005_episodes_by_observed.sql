-- GET /v1/episodes lists a scope's episodes newest first (observedAt, then write order).
CREATE INDEX memories_by_observed ON {schema}.memories (tenant, scope_key, observed_at, rowid)
    WHERE source = 'EPISODE';
