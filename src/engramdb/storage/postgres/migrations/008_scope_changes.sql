-- A large scope is answered from an in-memory copy (storage/postgres/search.py), refreshed
-- before every read from the rows its scope changed since: found through this index, not by
-- reading the whole scope.
CREATE INDEX memories_by_scope_change ON {schema}.memories (tenant, scope_key, change_seq);
