-- Audit writers supply only what they witness: actor, action and detail.
-- The row's id (its sequence) and its time come from the database, so
-- that no writer can backdate a row or give it an id that the service's
-- sealer would not look at. The owner keeps every column (migrations);
-- psd2ctl audit verify reports a row whose time goes backwards.
--
-- The time is the moment of the insert (clock_timestamp), not the start
-- of the writer's transaction (now): a transaction held open would
-- otherwise stamp its rows with a time of its choosing.
ALTER TABLE audit_log ALTER COLUMN at SET DEFAULT clock_timestamp();

-- Revoking the table's INSERT also revokes its column grants.
DO $$
DECLARE
	r name;
BEGIN
	FOR r IN SELECT rolname FROM pg_roles
	    WHERE rolname IN ('psd2_service', 'psd2_operator') LOOP
		EXECUTE format('REVOKE INSERT ON audit_log FROM %I', r);
		EXECUTE format('GRANT INSERT (actor, action, detail) '
		    'ON audit_log TO %I', r);
	END LOOP;
END
$$;

-- A row written before this migration with an id ahead of the sequence
-- would make a later genuine insert fail on the primary key: the
-- sequence continues after the highest id written.
SELECT setval(pg_get_serial_sequence('audit_log', 'id'), m)
FROM (SELECT max(id) AS m FROM audit_log) x
WHERE m IS NOT NULL AND m > (SELECT last_value FROM audit_log_id_seq);
