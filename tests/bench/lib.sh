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

# bench_instance PORT CONF LOG: starts a sandbox psd2gate on PORT for load
# (signing optional, so unsigned and signed requests are both served; no
# login rate limit; the sandbox TPP's certificate and CA minted first),
# its configuration written to CONF (in conf/, for the relative
# includes). Sets gate to its pid; waits for /health.
bench_instance() {
	sed -e "s/127.0.0.1 8080/127.0.0.1 $1/" \
	    -e 's/^psd2_login_rate_per_minute.*/psd2_login_rate_per_minute	0/' \
	    -e 's/^psd2_signing_required.*/psd2_signing_required	no/' \
	    conf/sandbox.conf > "$2"
	sh tests/pki/mint.sh sandbox var/sandbox >/dev/null
	tests/pgcluster.sh start >/dev/null
	for step in keys-init migrate sandbox-seed; do
		"$BIN/psd2ctl" -c "$2" "$step" >/dev/null
	done
	"$BIN/psd2gate" -c "$2" -f -n -r -q > "$3" 2>&1 &
	gate=$!
	for _ in $(seq 50); do
		curl -fs "http://127.0.0.1:$1/health" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "bench: psd2gate on port $1 did not start (see $3)" >&2
	return 1
}
