-- The change feed and its webhooks (storage/feed/port.py says what each table is for).
-- Every scope that ever held a memory or a record, by its five fields: the feed tells who may read
-- a change by them, also once the scope is erased. Names only, never text; never updated.
CREATE TABLE IF NOT EXISTS scopes (
    scope_key              TEXT    PRIMARY KEY,
    agent_id               TEXT    NOT NULL,
    profile_id             TEXT    NOT NULL,
    privacy_scope          TEXT    NOT NULL,
    participant_scope_hash TEXT    NOT NULL,
    sandbox_eligible       INTEGER NOT NULL
);
-- A participant's scopes (its export, its erasure) found without reading every memory of the tenant.
CREATE INDEX IF NOT EXISTS scopes_by_participant ON scopes (participant_scope_hash);
CREATE TRIGGER IF NOT EXISTS memories_name_scope AFTER INSERT ON memories
BEGIN
    INSERT OR IGNORE INTO scopes VALUES (NEW.scope_key, NEW.agent_id, NEW.profile_id, NEW.privacy_scope,
                                         NEW.participant_scope_hash, NEW.sandbox_eligible);
END;
CREATE TRIGGER IF NOT EXISTS records_name_scope AFTER INSERT ON records
BEGIN
    INSERT OR IGNORE INTO scopes VALUES (NEW.scope_key, NEW.agent_id, NEW.profile_id, NEW.privacy_scope,
                                         NEW.participant_scope_hash, NEW.sandbox_eligible);
END;
INSERT OR IGNORE INTO scopes
    SELECT scope_key, agent_id, profile_id, privacy_scope, participant_scope_hash, sandbox_eligible FROM memories
    UNION SELECT scope_key, agent_id, profile_id, privacy_scope, participant_scope_hash, sandbox_eligible FROM records;

CREATE TABLE IF NOT EXISTS webhooks (
    webhook_id        TEXT    PRIMARY KEY,
    url               TEXT    NOT NULL,
    kinds_json        TEXT    NOT NULL,
    secret_salt       TEXT    NOT NULL,
    secret_check      TEXT    NOT NULL,
    label             TEXT,
    created_at        TEXT    NOT NULL,
    cursor            INTEGER NOT NULL,
    delivered         INTEGER NOT NULL DEFAULT 0,
    last_delivered_at TEXT,
    last_error        TEXT
);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    delivery_id TEXT    PRIMARY KEY,
    webhook_id  TEXT    NOT NULL,
    after_seq   INTEGER NOT NULL,
    through_seq INTEGER NOT NULL,
    changes     INTEGER NOT NULL,
    body        TEXT    NOT NULL,
    state       TEXT    NOT NULL CHECK (state IN ('pending', 'dead')),
    attempts    INTEGER NOT NULL,
    next_at     TEXT    NOT NULL,
    last_error  TEXT,
    last_status INTEGER,
    created_at  TEXT    NOT NULL,
    dead_at     TEXT
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_next ON webhook_deliveries (webhook_id, state, after_seq);
