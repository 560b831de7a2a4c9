-- A fact's episode (and an episode's facts) found through the index alone: with the kind in it, the
-- lookup no longer reads every episode of the scope, or every fact of a sourceEventId many facts share
-- (the LangGraph store gives all its items one). Built under another name first: building takes a lock
-- that lets reads go on, and the old index is dropped (which blocks reads too) only for the rename.
CREATE INDEX memories_by_source_event_kind ON {schema}.memories (tenant, scope_key, source, source_event_id)
    WHERE source_event_id IS NOT NULL;
DROP INDEX {schema}.memories_by_source_event;
ALTER INDEX {schema}.memories_by_source_event_kind RENAME TO memories_by_source_event;
