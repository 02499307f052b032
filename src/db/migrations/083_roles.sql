-- Database roles (issue 10). The role running the migrations owns every
-- table (the owner role: migrations only). Three login roles get only
-- what they need, when they exist (the DBA creates them; tests/
-- pgcluster.sh does for the test and sandbox clusters):
--   psd2_service   the service: read and write the tables it uses, but
--                  audit_log only INSERT and SELECT (no UPDATE, DELETE or
--                  TRUNCATE: sealing goes through audit_seal, SECURITY
--                  DEFINER); no DDL (partitions via SECURITY DEFINER
--                  functions).
--   psd2_operator  psd2ctl's commands other than migrate: the same.
--   psd2_daemon    psd2-deviced: only the columns of device and
--                  device_challenge it writes (device/PROTOCOL.md 7.2),
--                  nothing else, so a compromised device host cannot
--                  change a device's status, PSU or counter, a
--                  challenge's payment fields, or any other table.
-- Tables created later by the owner get the service's and operator's
-- rights by default privileges; a role created after this migration
-- needs these grants repeated (README "Database roles").
DO $$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['psd2_service', 'psd2_operator'] LOOP
		CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles
		    WHERE rolname = r);
		EXECUTE format('GRANT USAGE ON SCHEMA public TO %I', r);
		EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL '
		    'TABLES IN SCHEMA public TO %I', r);
		EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN '
		    'SCHEMA public TO %I', r);
		EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON audit_log '
		    'FROM %I', r);
		EXECUTE format('REVOKE INSERT, UPDATE, DELETE ON '
		    'schema_migrations FROM %I', r);
		EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA public '
		    'GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %I', r);
		EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA public '
		    'GRANT USAGE, SELECT ON SEQUENCES TO %I', r);
	END LOOP;
	IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'psd2_daemon') THEN
		GRANT USAGE ON SCHEMA public TO psd2_daemon;
		GRANT SELECT ON device, device_challenge TO psd2_daemon;
		GRANT INSERT (serial, model, firmware, public_key, attestation,
		    attestation_ok, host) ON device TO psd2_daemon;
		GRANT UPDATE (last_seen, host, firmware) ON device
		    TO psd2_daemon;
		GRANT UPDATE (status, lease_owner, lease_expires, attempts,
		    last_error, outcome, counter, signature, failure_reason,
		    claimed_at, finished_at) ON device_challenge
		    TO psd2_daemon;
	END IF;
END
$$;
