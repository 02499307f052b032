-- The roles of migration 083 in use (issue 10): the service, psd2ctl and
-- psd2-deviced now connect as psd2_service, psd2_operator and
-- psd2_daemon. 083 granted only to roles that existed when it ran; a
-- database migrated before its DBA (or tests/pgcluster.sh) created them
-- would leave the processes without rights. The same grants again, for
-- the roles that exist now (granting twice changes nothing).
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
