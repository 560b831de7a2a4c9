-- A scope's schema (labels, properties, kinds, how many records hold each) joined every value to its
-- record and sorted them; the values carry their record's scope and label, read here in order.
CREATE INDEX CONCURRENTLY IF NOT EXISTS record_values_catalog ON {schema}.record_values (tenant, scope_key, label, name, kind, record);
