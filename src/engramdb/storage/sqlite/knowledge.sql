-- The knowledge plane: records under UPPER_CASE labels, their typed values, relationships
-- between records and memories, each record's earlier properties, and the vectors of its texts.
CREATE TABLE records (
    rowid                  INTEGER PRIMARY KEY,
    record_id              TEXT    NOT NULL,
    scope_key              TEXT    NOT NULL,
    agent_id               TEXT    NOT NULL,
    profile_id             TEXT    NOT NULL,
    privacy_scope          TEXT    NOT NULL,
    participant_scope_hash TEXT    NOT NULL,
    sandbox_eligible       INTEGER NOT NULL,
    label                  TEXT    NOT NULL,
    properties_json        TEXT    NOT NULL,
    merge_key              TEXT,
    -- The mergeBy names merge_key is made of (JSON), so a PATCH of them moves the key; NULL for a
    -- child known by its content, and for records written before it was kept.
    merge_identity         TEXT,
    origin                 TEXT    NOT NULL,
    version                INTEGER NOT NULL,
    created_at             TEXT    NOT NULL,
    updated_at             TEXT    NOT NULL,
    UNIQUE (scope_key, record_id),
    -- Idempotent upserts by mergeBy are a constraint, not a check (NULLs never collide).
    UNIQUE (scope_key, label, merge_key)
);
CREATE INDEX records_by_label ON records (scope_key, label, created_at);
CREATE TABLE record_values (
    record       INTEGER NOT NULL,
    scope_key    TEXT    NOT NULL,
    label        TEXT    NOT NULL,  -- the record's (labels never change): a related set needs no join
    name         TEXT    NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('string', 'number', 'boolean', 'datetime')),
    text_key     TEXT,
    text_value   TEXT,
    text_fold    TEXT,
    number_value REAL
);
CREATE INDEX record_values_text ON record_values (scope_key, label, name, kind, text_key);
CREATE INDEX record_values_number ON record_values (scope_key, label, name, kind, number_value);
-- A condition on a record is one seek here, answered from the index alone.
CREATE INDEX record_values_of ON record_values (record, name, kind, text_key, number_value);
-- A scope's schema (labels, properties, kinds, how many records hold each) from the index alone.
CREATE INDEX record_values_catalog ON record_values (scope_key, label, name, kind, record);
CREATE TABLE relationships (
    rowid           INTEGER PRIMARY KEY,
    scope_key       TEXT    NOT NULL,
    type            TEXT    NOT NULL,
    source_kind     TEXT    NOT NULL CHECK (source_kind IN ('RECORD', 'EPISODE', 'MEMORY_FACT')),
    source          INTEGER NOT NULL,
    target_kind     TEXT    NOT NULL CHECK (target_kind IN ('RECORD', 'EPISODE', 'MEMORY_FACT')),
    target          INTEGER NOT NULL,
    properties_json TEXT    NOT NULL,
    created_at      TEXT    NOT NULL,
    UNIQUE (scope_key, type, source_kind, source, target_kind, target)
);
CREATE INDEX relationships_out ON relationships (scope_key, source_kind, source, type, target_kind, target);
CREATE INDEX relationships_in ON relationships (scope_key, target_kind, target, type, source_kind, source);
CREATE TABLE record_history (
    record          INTEGER NOT NULL,
    version         INTEGER NOT NULL,
    properties_json TEXT    NOT NULL,
    replaced_at     TEXT    NOT NULL,
    PRIMARY KEY (record, version)
);
CREATE TABLE record_vectors (
    rowid          INTEGER PRIMARY KEY,
    record         INTEGER NOT NULL,
    scope_key      TEXT    NOT NULL,
    name           TEXT    NOT NULL,
    text           TEXT    NOT NULL,
    embed_state    TEXT    NOT NULL DEFAULT 'pending' CHECK (embed_state IN ('pending', 'ready', 'failed')),
    embed_error    TEXT,
    embed_attempts INTEGER NOT NULL DEFAULT 0,
    embed_next_at  TEXT,
    embed_model    TEXT,
    embedding      BLOB,
    UNIQUE (record, name)
);
CREATE INDEX record_vectors_due ON record_vectors (embed_state, embed_next_at) WHERE embed_state != 'ready';
CREATE INDEX record_vectors_of ON record_vectors (scope_key, name);
CREATE INDEX record_vectors_by_model ON record_vectors (embed_model) WHERE embed_state = 'ready';
