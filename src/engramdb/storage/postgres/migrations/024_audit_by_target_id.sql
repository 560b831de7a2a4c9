-- The audit log by a target's id alone (?targetId=, a fact's timeline) walked the whole log by sequence.
CREATE INDEX audit_log_by_target_id ON {schema}.audit_log (tenant, target_id, seq);
