-- The entries about one row, found by it: verification holds every stored row to the last entry
-- about it (storage/coverage.py); the rows of tenants made before this are covered when first opened.
CREATE INDEX audit_log_by_target ON {schema}.audit_log (tenant, target_kind, target_id, seq);
