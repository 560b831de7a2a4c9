-- A fact's episode (and an episode's facts) found through the index alone: with the kind in it, the
-- lookup no longer reads every episode of the scope, or every fact of a sourceEventId many facts share
-- (the LangGraph store gives all its items one).
DROP INDEX IF EXISTS {schema}.memories_by_source_event;
CREATE INDEX memories_by_source_event ON {schema}.memories (tenant, scope_key, source, source_event_id)
    WHERE source_event_id IS NOT NULL;
