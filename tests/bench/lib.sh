# Shared by the bench scripts (sourced). Needs PSQL set by the caller.

# bench_access_token CONSENT_UUID: prints a fresh access token of the
# sandbox TPP for anna's consent CONSENT_UUID (both accounts, SCA "now":
# the PSU counts as present, so the unattended-access limit does not
# apply), stored as its SHA-256 like the service does.
bench_access_token() {
	$PSQL <<SQL
INSERT INTO consent (id, psu_id, client_id, scopes, valid_until, sca_at)
SELECT '$1', id, 'sandbox-tpp', '{ACCOUNT_INFORMATION}',
    current_date + 90, now()
FROM psu WHERE username = 'anna'
ON CONFLICT (id) DO UPDATE SET status = 'valid', sca_at = now(),
    valid_until = current_date + 90;
INSERT INTO consent_account (consent_id, account_id)
SELECT '$1', a.id FROM account a JOIN psu p ON p.id = a.psu_id
WHERE p.username = 'anna' ON CONFLICT DO NOTHING;
DELETE FROM token WHERE consent_id = '$1';
CREATE TEMP TABLE t AS SELECT gen_random_uuid()::text AS tok;
INSERT INTO token (token_hash, kind, family, client_id, consent_id, scopes,
    expires_at)
SELECT sha256(convert_to(tok, 'UTF8')), 'access', gen_random_uuid(),
    'sandbox-tpp', '$1', '{ACCOUNT_INFORMATION}',
    now() + interval '1 hour' FROM t;
SELECT tok FROM t;
SQL
}
