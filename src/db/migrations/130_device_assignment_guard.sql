-- No role changes which PSU holds an authenticator except through the
-- functions that enforce four eyes (staff_device_action: a request, then
-- another member's approval) or name the exception
-- (device_assign_break_glass), both SECURITY DEFINER as the owner
-- (src/db/functions/72_staff_devices.sql). The service's and psd2ctl's
-- roles held table-wide INSERT, UPDATE and DELETE on device and
-- device_assignment (migrations 083, 095): an UPDATE of device.psu_id,
-- an INSERT of an active device with a PSU, or a forged request row
-- skipped the second pair of eyes. A column revoke does nothing under a
-- table grant, so the table grants go and UPDATE comes back on every
-- column but psu_id. Nothing of theirs inserts or deletes devices
-- (psd2-deviced records them, with its own column grants).
DO $$
DECLARE
	r text;
	cols text;
BEGIN
	SELECT string_agg(quote_ident(column_name), ', '
	    ORDER BY ordinal_position) INTO cols
	FROM information_schema.columns
	WHERE table_schema = 'public' AND table_name = 'device'
	    AND column_name <> 'psu_id';
	FOREACH r IN ARRAY ARRAY['psd2_service', 'psd2_operator'] LOOP
		CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles
		    WHERE rolname = r);
		EXECUTE format('REVOKE INSERT, UPDATE, DELETE ON device '
		    'FROM %I', r);
		EXECUTE format('GRANT UPDATE (%s) ON device TO %I', cols, r);
		EXECUTE format('REVOKE INSERT, UPDATE, DELETE ON '
		    'device_assignment FROM %I', r);
	END LOOP;
END
$$;
