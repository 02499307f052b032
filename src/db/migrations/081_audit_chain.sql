-- The audit log becomes append-only and hash-chained (issue 10; the
-- canonical encoding is defined byte for byte in README.md, "Audit
-- log"). Writers insert rows unsealed (seq, prev_hash, row_hash NULL), so
-- that no writer waits for the chain's head; one sealer at a time
-- (audit_seal, under an advisory lock) gives the unsealed rows, in id
-- order, the next sequence numbers and their hashes. The chain runs in
-- seq order: a row whose transaction commits after a higher id was
-- sealed is sealed in a later round with a later seq.
ALTER TABLE audit_log ADD COLUMN seq bigint UNIQUE;
ALTER TABLE audit_log ADD COLUMN prev_hash bytea
    CHECK (length(prev_hash) = 32);
ALTER TABLE audit_log ADD COLUMN row_hash bytea
    CHECK (length(row_hash) = 32);
ALTER TABLE audit_log ADD COLUMN sealed_at timestamptz;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_sealed_whole CHECK
    ((seq IS NULL) = (row_hash IS NULL) AND
     (seq IS NULL) = (prev_hash IS NULL) AND
     (seq IS NULL) = (sealed_at IS NULL));
CREATE INDEX audit_log_unsealed ON audit_log (id) WHERE seq IS NULL;
CREATE INDEX audit_log_actor ON audit_log (actor, id);
CREATE INDEX audit_log_action ON audit_log (action, id);

-- Append-only, also for the table's owner: rows are inserted unsealed,
-- the one UPDATE allowed seals
-- an unsealed row and changes nothing else; DELETE and TRUNCATE are
-- refused. (A superuser can still switch triggers off: that is what the
-- chain and the signed checkpoints detect.) The trigger function lives
-- in src/db/functions/71_audit.sql; this is a first definition.
CREATE FUNCTION audit_log_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'audit_log is append-only';
END;
$$;
CREATE TRIGGER audit_log_guard_insert BEFORE INSERT ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_guard();
CREATE TRIGGER audit_log_guard_update BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_guard();
CREATE TRIGGER audit_log_guard_delete BEFORE DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_guard();
CREATE TRIGGER audit_log_guard_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_guard();
