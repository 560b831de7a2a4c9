-- Structured fact search (search_facts, list_subjects): a namespace's current facts are read from
-- this index alone (scope, subject prefix in byte order, then newest first), never from the rows.
CREATE INDEX memories_current_facts ON {schema}.memories
    (tenant, scope_key, subject_key COLLATE "C", recorded_at, rowid, valid_until, source_event_id)
    WHERE source = 'MEMORY_FACT' AND status = 'active';
