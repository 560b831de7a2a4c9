-- One tenant's database. Applied once, inside a transaction, when the file is created.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- audit_digests: the audit's digests cover each row's whole state (storage/coverage.py); a file
-- made before them has its rows covered once when opened.
INSERT INTO meta (key, value) VALUES ('schema_version', '1'), ('change_seq', '0'), ('audit_digests', '2');

-- Episodes and facts share one table: one in-memory copy per scope, one recall plan.
CREATE TABLE memories (
    rowid                  INTEGER PRIMARY KEY,
    source                 TEXT    NOT NULL CHECK (source IN ('EPISODE', 'MEMORY_FACT')),
    memory_id              TEXT    NOT NULL,
    scope_key              TEXT    NOT NULL,
    agent_id               TEXT    NOT NULL,
    profile_id             TEXT    NOT NULL,
    privacy_scope          TEXT    NOT NULL,
    participant_scope_hash TEXT    NOT NULL,
    sandbox_eligible       INTEGER NOT NULL,
    session_id             TEXT,
    subject_key            TEXT,
    kind                   TEXT,
    text                   TEXT    NOT NULL,
    embed_text             TEXT    NOT NULL,
    trust_class            TEXT    NOT NULL,
    origin                 TEXT    NOT NULL,
    status                 TEXT    NOT NULL,
    confidence             REAL    NOT NULL,
    observed_at            TEXT    NOT NULL,
    valid_from             TEXT,
    valid_until            TEXT,
    recorded_at            TEXT    NOT NULL,
    active_from            TEXT,
    retired_at             TEXT,
    supersedes_id          TEXT,
    superseded_by_id       TEXT,
    status_reason          TEXT,
    invalid_at             TEXT,   -- valid time a successor holds from (set when it is recorded)
    source_event_id        TEXT,   -- the contract's sourceEventId: what DERIVED_FROM links follow
    event_json             TEXT    NOT NULL,
    change_seq             INTEGER NOT NULL,
    embed_state            TEXT    NOT NULL DEFAULT 'pending'
                                   CHECK (embed_state IN ('pending', 'ready', 'failed')),
    embed_error            TEXT,
    embed_attempts         INTEGER NOT NULL DEFAULT 0,
    embed_next_at          TEXT,
    embed_model            TEXT,
    embedding              BLOB,
    importance             REAL,              -- set by a person; NULL: the source's prior
    pinned                 INTEGER DEFAULT 0, -- pinned by a person: never archived (NULL reads as 0)
    use_count              INTEGER DEFAULT 0, -- times recalled (recorded in batches)
    last_used_at           TEXT,
    -- Idempotence is a constraint, not a check-then-insert: eventIds of two participants can
    -- collide (the hash omits participantScopeHash), so the scope is part of the key.
    UNIQUE (scope_key, source, memory_id)
);
CREATE INDEX memories_by_scope_change ON memories (scope_key, change_seq);
CREATE INDEX memories_by_subject ON memories (scope_key, subject_key, kind, status);
-- A fact slot's versions by their starts and by their ends: a write reads the few it concerns (storage/slots.py).
CREATE INDEX memories_slot_starts ON memories (scope_key, subject_key, kind, status, valid_from)
    WHERE source = 'MEMORY_FACT';
CREATE INDEX memories_slot_ends ON memories (scope_key, subject_key, kind, status, invalid_at, valid_until)
    WHERE source = 'MEMORY_FACT';
CREATE INDEX memories_by_observed ON memories (scope_key, observed_at, rowid) WHERE source = 'EPISODE';
CREATE INDEX memories_facts_by_recorded ON memories (scope_key, source, recorded_at) WHERE source = 'MEMORY_FACT';
CREATE INDEX memories_by_vector_model ON memories (embed_model) WHERE embed_state = 'ready';
CREATE INDEX memories_pending_review ON memories (recorded_at) WHERE source = 'MEMORY_FACT' AND status = 'pending_review';
-- Covers the scopes' counts (list_scopes, every dashboard page) and the count of a scope's episodes.
CREATE INDEX memories_by_scope_stats ON memories (scope_key, agent_id, profile_id, privacy_scope,
    participant_scope_hash, sandbox_eligible, source, status, recorded_at);
CREATE INDEX memories_by_expiry ON memories (valid_until) WHERE status = 'active';
CREATE INDEX memories_by_supersedes ON memories (scope_key, supersedes_id);
CREATE INDEX memories_by_superseded_by ON memories (scope_key, superseded_by_id);
-- The kind is in it: a fact's episode is found without reading every fact of its sourceEventId (the
-- LangGraph store gives all its items one).
CREATE INDEX memories_by_source_event ON memories (scope_key, source, source_event_id)
    WHERE source_event_id IS NOT NULL;
CREATE INDEX memories_by_recorded ON memories (recorded_at) WHERE status = 'active';
CREATE INDEX memories_by_id ON memories (memory_id);
-- Structured fact search (search_facts, list_subjects): a scope's current facts newest first, from the
-- index alone (a page stops once it is full).
CREATE INDEX memories_current_facts ON memories (scope_key, recorded_at, subject_key, valid_until, source_event_id)
    WHERE source = 'MEMORY_FACT' AND status = 'active';
CREATE INDEX memories_embedding_due ON memories (embed_state, embed_next_at)
    WHERE embed_state != 'ready';

-- A value refused for a slot. At most one unlifted tombstone per value.
CREATE TABLE tombstones (
    tombstone_id TEXT PRIMARY KEY,
    scope_key    TEXT NOT NULL,
    subject_key  TEXT NOT NULL,
    kind         TEXT NOT NULL,
    value_hash   TEXT NOT NULL,
    fact_id      TEXT,
    reason       TEXT,
    created_at   TEXT NOT NULL,
    actor_key_id TEXT,
    lifted_at    TEXT,
    lifted_by    TEXT,
    lift_reason  TEXT
);
CREATE UNIQUE INDEX tombstones_unlifted ON tombstones (scope_key, subject_key, kind, value_hash)
    WHERE lifted_at IS NULL;
CREATE INDEX tombstones_by_slot ON tombstones (scope_key, subject_key, kind, created_at);

CREATE TABLE api_keys (
    key_id      TEXT PRIMARY KEY,
    role        TEXT NOT NULL CHECK (role IN ('agent', 'host', 'reviewer', 'admin')),
    grant_json  TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    label       TEXT,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);

-- Append-only, hash-chained. There is no code path that updates or deletes an entry, and the
-- triggers refuse it from any other client of this file.
CREATE TABLE audit_log (
    seq           INTEGER PRIMARY KEY,
    at            TEXT NOT NULL,
    action        TEXT NOT NULL,
    actor_key_id  TEXT,
    actor_role    TEXT,
    target_kind   TEXT,
    target_id     TEXT,
    scope_key     TEXT,
    before_digest TEXT,
    after_digest  TEXT,
    reason        TEXT,
    prev_hash     TEXT NOT NULL,
    hash          TEXT NOT NULL,
    reason_digest TEXT,  -- the chain covers this, not the reason, so the reason can be erased
    reason_nonce  TEXT
);
-- The entries about one row, found by it (verification holds each row to the last one).
CREATE INDEX audit_log_by_target ON audit_log (target_kind, target_id, seq);
-- A scope's entries in order: the change feed of a key bound to one scope reads them alone.
CREATE INDEX audit_log_by_scope ON audit_log (scope_key, seq);
CREATE INDEX audit_log_by_target_id ON audit_log (target_id, seq);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE OF
    seq, at, action, actor_key_id, actor_role, target_kind, target_id, scope_key, before_digest,
    after_digest, prev_hash, hash, reason_digest ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
-- The one change allowed: erasing a reason (and its nonce) that has a digest in the chain.
CREATE TRIGGER audit_log_erase_only BEFORE UPDATE OF reason, reason_nonce ON audit_log
WHEN NEW.reason IS NOT NULL OR NEW.reason_nonce IS NOT NULL OR OLD.reason_digest IS NULL
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only (a reason can only be erased)');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
