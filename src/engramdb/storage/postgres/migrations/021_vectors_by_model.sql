-- The re-embedding backlog (/healthz, which needs no key) counted every ready vector of every tenant.
CREATE INDEX memories_by_vector_model ON {schema}.memories (tenant, embed_model) WHERE embed_state = 'ready';
CREATE INDEX record_vectors_by_model ON {schema}.record_vectors (tenant, embed_model) WHERE embed_state = 'ready';
