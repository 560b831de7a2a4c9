-- The review queue (every dashboard page counts it) read every fact of the tenant.
CREATE INDEX memories_pending_review ON {schema}.memories (tenant, recorded_at)
    WHERE source = 'MEMORY_FACT' AND status = 'pending_review';
