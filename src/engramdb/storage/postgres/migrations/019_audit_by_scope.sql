-- A scope's entries in order: the change feed of a key bound to one scope read every other scope's
-- entries after its cursor (in one statement: its page limit counts rows found, not rows read).
CREATE INDEX audit_log_by_scope ON {schema}.audit_log (tenant, scope_key, seq);
