-- psd2-deviced writes only through its functions
-- (src/db/functions/50_devices.sql, "psd2-deviced's writes"): the
-- psd2_daemon role keeps SELECT on device and device_challenge, loses
-- every INSERT and UPDATE it had on them (083, 095), and may EXECUTE
-- exactly those functions. With UPDATE on finished_at gone as well, the
-- daemon cannot make a late outcome look early.
--
-- The functions are declared here with their signatures, so that they
-- can be granted now: migrations run before the functions files, and
-- 50_devices.sql replaces each body in the same `psd2ctl migrate` (a
-- replaced function keeps its grants). Until then a call fails loudly.
DO $$
DECLARE
	f text;
BEGIN
	FOREACH f IN ARRAY ARRAY[
	    'deviced_record(text, text, text, bytea, bytea, boolean, text) '
		'RETURNS TABLE (status text, first_time boolean)',
	    'deviced_claim(text, integer, text, bytea) RETURNS TABLE '
		'(id uuid, nonce bytea, amount_minor bigint, currency text, '
		'payee_name text, payee_iban text, timeout_s integer, '
		'attempts integer, request_id uuid)',
	    'deviced_renew(text, integer) RETURNS SETOF uuid',
	    'deviced_finish(uuid, text, text, bigint, bytea) RETURNS text',
	    'deviced_fail(uuid, text, text, boolean) RETURNS text',
	    'deviced_release_all(text, text) RETURNS integer',
	    'deviced_sweep() RETURNS integer'] LOOP
		EXECUTE format('CREATE FUNCTION %s LANGUAGE plpgsql '
		    'SECURITY DEFINER SET search_path = public AS '
		    '$f$BEGIN RAISE EXCEPTION ''defined by '
		    'src/db/functions/50_devices.sql''; END$f$', f);
	END LOOP;
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'psd2_daemon')
	THEN
		RETURN;
	END IF;
	REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON device, device_challenge
	    FROM psd2_daemon;
	GRANT SELECT ON device, device_challenge TO psd2_daemon;
	GRANT EXECUTE ON FUNCTION
	    deviced_record(text, text, text, bytea, bytea, boolean, text),
	    deviced_claim(text, integer, text, bytea),
	    deviced_renew(text, integer),
	    deviced_finish(uuid, text, text, bigint, bytea),
	    deviced_fail(uuid, text, text, boolean),
	    deviced_release_all(text, text),
	    deviced_sweep()
	    TO psd2_daemon;
END
$$;
