-- A write into a fact slot read every retired version of it (about 60 ms a write at 10,000, inside the
-- write lock): its versions by their starts and by their ends, compared bytewise (storage/slots.py).
CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_slot_starts ON {schema}.memories
    (tenant, scope_key, subject_key, kind, status, valid_from COLLATE "C") WHERE source = 'MEMORY_FACT';
CREATE INDEX CONCURRENTLY IF NOT EXISTS memories_slot_ends ON {schema}.memories
    (tenant, scope_key, subject_key, kind, status, invalid_at COLLATE "C", valid_until COLLATE "C") WHERE source = 'MEMORY_FACT';
