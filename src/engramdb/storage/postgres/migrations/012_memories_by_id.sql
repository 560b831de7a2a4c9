-- A memory found by its id alone, in any scope of its tenant (GET /v1/memories/{id}).
CREATE INDEX memories_by_id ON {schema}.memories (tenant, memory_id);
