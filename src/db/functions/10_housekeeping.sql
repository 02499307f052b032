-- Rate limits and the purge of expired rows.
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).

-- Counts one hit for bucket in the current minute; true while within limit.
CREATE OR REPLACE FUNCTION rate_hit(p_bucket text, p_limit integer) RETURNS boolean
LANGUAGE sql AS $$
	INSERT INTO rate_counter AS r (bucket, window_start, hits)
	VALUES (p_bucket, date_trunc('minute', now()), 1)
	ON CONFLICT (bucket, window_start) DO UPDATE SET hits = r.hits + 1
	RETURNING p_limit <= 0 OR hits <= p_limit;
$$;

-- Deletes expired rows; the account information part is psd2_purge_ais().
CREATE OR REPLACE FUNCTION psd2_purge() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
	n integer := 0;
	k integer;
BEGIN
	DELETE FROM auth_code WHERE expires_at < now() - interval '1 day';
	GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
	DELETE FROM token WHERE expires_at < now() - interval '1 day';
	GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
	DELETE FROM web_session WHERE expires_at < now();
	GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
	DELETE FROM auth_flow WHERE expires_at < now();
	GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
	DELETE FROM pushed_request WHERE expires_at < now();
	GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
	DELETE FROM client_assertion WHERE expires_at < now();
	GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
	DELETE FROM dpop_proof WHERE expires_at < now();
	GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
	DELETE FROM webauthn_challenge WHERE expires_at < now();
	GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
	DELETE FROM rate_counter WHERE window_start < now() - interval '2 minutes';
	GET DIAGNOSTICS k = ROW_COUNT; n := n + k;
	-- consents past validUntil expire; those left unauthorised reject
	n := n + bg_consent_sweep();
	n := n + psd2_purge_ais();
	RETURN n;
END;
$$;
