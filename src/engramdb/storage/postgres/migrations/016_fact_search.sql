-- Structured fact search (search_facts, list_subjects): a scope's current facts newest first, read
-- from this index alone (the subject compared in byte order), so a page stops once it is full.
CREATE INDEX memories_current_facts ON {schema}.memories
    (tenant, scope_key, recorded_at, rowid, subject_key COLLATE "C", valid_until, source_event_id)
    WHERE source = 'MEMORY_FACT' AND status = 'active';
