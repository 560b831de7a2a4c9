-- A slot's tombstones, lifted ones too (a fact's history, a deletion's), were read from every tombstone.
CREATE INDEX tombstones_by_slot ON {schema}.tombstones (tenant, scope_key, subject_key, kind, created_at);
