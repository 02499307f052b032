-- The audit chain moves out of audit_log into its own append-only table
-- (issue 10; the canonical encoding, README.md "Audit log", is
-- unchanged). Sealing used to UPDATE every audit row once: a second
-- version of each row with all five of its index entries again, a
-- trigger call per row, and dead rows to vacuum, on the cores the
-- payment confirmations need (the bench measured confirmations 14-46%
-- slower with audit rows). Now the sealer only appends (seq, id, hashes)
-- to audit_chain, audit rows are never updated, and an audit insert
-- touches three indexes and no trigger.
CREATE TABLE audit_chain (
	seq		bigint PRIMARY KEY CHECK (seq > 0),
	id		bigint NOT NULL UNIQUE,
	prev_hash	bytea NOT NULL CHECK (length(prev_hash) = 32),
	row_hash	bytea NOT NULL CHECK (length(row_hash) = 32),
	sealed_at	timestamptz NOT NULL DEFAULT now()
);
INSERT INTO audit_chain (seq, id, prev_hash, row_hash, sealed_at)
SELECT seq, id, prev_hash, row_hash, sealed_at FROM audit_log
WHERE seq IS NOT NULL;

-- Nothing left to check on INSERT; the columns go with their index,
-- unique constraint and checks.
DROP TRIGGER audit_log_guard_insert ON audit_log;
ALTER TABLE audit_log DROP COLUMN seq, DROP COLUMN prev_hash,
    DROP COLUMN row_hash, DROP COLUMN sealed_at;

-- audit_chain refuses UPDATE, DELETE and TRUNCATE like audit_log (the
-- trigger function, audit_log_guard, is in src/db/functions/71_audit.sql).
CREATE TRIGGER audit_chain_guard_update BEFORE UPDATE ON audit_chain
    FOR EACH ROW EXECUTE FUNCTION audit_log_guard();
CREATE TRIGGER audit_chain_guard_delete BEFORE DELETE ON audit_chain
    FOR EACH ROW EXECUTE FUNCTION audit_log_guard();
CREATE TRIGGER audit_chain_guard_truncate BEFORE TRUNCATE ON audit_chain
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_guard();

-- The roles of migration 083: the service and psd2ctl read the chain;
-- only audit_seal() (SECURITY DEFINER, as the owner) appends to it.
DO $$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['psd2_service', 'psd2_operator',
	    'psd2_daemon'] LOOP
		CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles
		    WHERE rolname = r);
		EXECUTE format('REVOKE ALL ON audit_chain FROM %I', r);
		CONTINUE WHEN r = 'psd2_daemon';
		EXECUTE format('GRANT SELECT ON audit_chain TO %I', r);
	END LOOP;
END
$$;
