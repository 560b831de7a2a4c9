-- Recall lends a turn part of its neighbours' scores: the episodes written just before and
-- after it in its session, found through this index.
CREATE INDEX memories_by_session ON {schema}.memories (tenant, scope_key, session_id, rowid)
    WHERE source = 'EPISODE';
