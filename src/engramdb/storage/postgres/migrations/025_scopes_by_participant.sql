-- A participant's scopes (its export, its erasure) were found by reading every memory and record of
-- the tenant by participant; the scopes table names them, by participant through this index.
CREATE INDEX scopes_by_participant ON {schema}.scopes (tenant, participant_scope_hash);
