-- Audit reasons are free text (possibly personal): the chain now covers a salted digest of each
-- reason, kept beside it, so erasing a participant can erase the text and the chain still holds.
ALTER TABLE {schema}.audit_log ADD COLUMN reason_digest TEXT;
ALTER TABLE {schema}.audit_log ADD COLUMN reason_nonce TEXT;
CREATE OR REPLACE FUNCTION {schema}.refuse_audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The one change allowed: erasing a digested reason and its nonce, nothing else.
    IF TG_OP = 'UPDATE' AND NEW.reason IS NULL AND NEW.reason_nonce IS NULL AND OLD.reason_digest IS NOT NULL
       AND (NEW.tenant, NEW.seq, NEW.at, NEW.action, NEW.actor_key_id, NEW.actor_role, NEW.target_kind,
            NEW.target_id, NEW.scope_key, NEW.before_digest, NEW.after_digest, NEW.prev_hash, NEW.hash,
            NEW.reason_digest)
           IS NOT DISTINCT FROM
           (OLD.tenant, OLD.seq, OLD.at, OLD.action, OLD.actor_key_id, OLD.actor_role, OLD.target_kind,
            OLD.target_id, OLD.scope_key, OLD.before_digest, OLD.after_digest, OLD.prev_hash, OLD.hash,
            OLD.reason_digest) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_log is append-only (a reason can only be erased)';
END $$;
GRANT UPDATE (reason, reason_nonce) ON {schema}.audit_log TO engram_app;
-- Erasure takes a scope's model links and queued jobs, and the error text of its ledger rows.
GRANT DELETE ON {schema}.model_links, {schema}.model_jobs TO engram_app;
GRANT UPDATE (error) ON {schema}.model_calls TO engram_app;
