# What FAPI 2.0 costs (sourced by tests/bench/bench.sh, after the refresh
# rows: it uses the client without rotation of bench_refresh_kept).
#
#   bench_dpop_ais    the signed account list with bearer tokens and with
#                     DPoP-bound ones (RFC 9449: one key of the bench
#                     TPP, every request its own proof, spent once),
#                     in the order bearer, DPoP, DPoP, bearer, each the
#                     mean of its two runs; target: a DPoP call costs at
#                     most 15% more than a bearer one
#   bench_fapi_token  the refresh grant, not rotated, of a client that
#                     authenticates with private_key_jwt (RFC 7523) and
#                     binds with DPoP (psd2gate gives such FAPI clients
#                     sender-constrained tokens only, so the two come
#                     together), beside the same grant with Basic, runs
#                     in the order Basic, FAPI, FAPI, Basic; target: at
#                     least 70% of the Basic rate
#
# A proof may be at most 60 s old when it arrives (src/tpp/dpop.c), and a
# pool's requests are made before its run: these runs last FAPI_SECS (5)
# and their pools are signed right before them, their proofs' iat 10 s
# ahead of the signing; bench_fapi_fresh fails a run that ended later.

FAPI_SECS=${BENCH_FAPI_SECS:-5}

# fapi_key: the bench TPP's ES256 key, its JWK Set and thumbprint.
fapi_key() {
	FAPI_JKT=$(/usr/bin/python3 tests/bench/dpop.py key "$OUT/dpop.pem" \
	    "$OUT/dpop.jwks")
}

# fapi_env: what a pool of proofs made now carries (the server's nonce,
# an iat); fapi_env_clear forgets it.
fapi_env() {
	BENCH_DPOP_KEY=$OUT/dpop.pem
	BENCH_DPOP_NONCE=$(/usr/bin/python3 tests/bench/dpop.py nonce \
	    "$OUT/dpop.pem" "$gate_base")
	BENCH_DPOP_BASE=$gate_base
	BENCH_DPOP_IAT=$(( $(date +%s) + 10 ))
	export BENCH_DPOP_KEY BENCH_DPOP_NONCE BENCH_DPOP_BASE BENCH_DPOP_IAT
}
fapi_env_clear() {
	unset BENCH_DPOP_KEY BENCH_DPOP_NONCE BENCH_DPOP_BASE BENCH_DPOP_IAT
}

# bench_fapi_fresh LABEL IAT: the run that just ended sent proofs of iat
# IAT; they must have been at most 60 s old.
bench_fapi_fresh() {
	if [ $(( $(date +%s) - $2 )) -gt 60 ]; then
		bench_fail "$1: its proofs were older than 60 s at the end"
	fi
}

# fapi_wrk LABEL CONNS ARGS...: bench_wrk for FAPI_SECS.
fapi_wrk() {
	saved=$SECS
	SECS=$FAPI_SECS
	bench_wrk "$@"
	SECS=$saved
}

# fapi_ais_run LABEL TOKENS [dpop]: one signed account-list run of
# FAPI_SECS from a pool signed now; its rate in RES.
fapi_ais_run() {
	iat=
	if [ "${3:-}" = dpop ]; then
		fapi_env
		iat=$BENCH_DPOP_IAT
	fi
	POOL_AT=$(date +%s)
	/usr/bin/python3 tests/bench/presign.py signed list "$2" \
	    $(( FAPI_SECS * 15000 * 2 + 5000 )) "$OUT/pool"
	fapi_env_clear
	POOL=$OUT/pool fapi_wrk "$1" "$CONNS" -s tests/bench/pool.lua \
	    "$gate_base"
	bench_fresh "$1"
	[ -n "$iat" ] && bench_fapi_fresh "$1" "$iat"
	bench_pss gate
}

bench_dpop_ais() {
	[ -n "${FAPI_JKT:-}" ] || fapi_key
	bench_access_tokens "$OUT/tokens-ais"
	bench_access_tokens "$OUT/tokens-dpop" "$FAPI_JKT"
	failed_before=$BENCH_FAILED
	proofs=$($PSQL -c "SELECT count(*) FROM dpop_proof")
	fapi_ais_run "AIS list (signed, bearer)" "$OUT/tokens-ais"
	b1=$RES
	fapi_ais_run "AIS list (signed, DPoP)" "$OUT/tokens-dpop" dpop
	d1=$RES
	fapi_ais_run "AIS list (signed, DPoP, again)" "$OUT/tokens-dpop" dpop
	d2=$RES
	fapi_ais_run "AIS list (signed, bearer, again)" "$OUT/tokens-ais"
	b2=$RES
	echo "  DPoP proofs spent: $(( $($PSQL -c "SELECT count(*) FROM dpop_proof") - proofs ))"
	if [ "$BENCH_FAILED" != "$failed_before" ]; then
		echo "DPoP account list: overhead not measured (a run above failed)"
		return 0
	fi
	more=$(awk -v b1="$b1" -v b2="$b2" -v d1="$d1" -v d2="$d2" \
	    'BEGIN { printf "%.1f", 100 * ((b1 + b2) / (d1 + d2) - 1) }')
	if awk -v m="$more" 'BEGIN { exit !(m <= 15) }'; then
		echo "DPoP account list: $more% more per request than bearer (target <= 15%): ok"
	else
		echo "DPoP account list: $more% more per request than bearer (target <= 15%): OVER TARGET"
		bench_fail "DPoP account list: $more% more per request than bearer (target <= 15%)"
	fi
}

# fapi_token_run LABEL: one run of the FAPI client's refresh grant from a
# pool made now; its rate in RES.
fapi_token_run() {
	fapi_env
	iat=$BENCH_DPOP_IAT
	BENCH_ISSUER=$FAPI_ISSUER /usr/bin/python3 tests/bench/presign_token.py \
	    bench-fapi "$OUT/tokens-fapi" $(( FAPI_SECS * 6000 * 2 + 5000 )) \
	    "$OUT/pool-fapi"
	fapi_env_clear
	POOL=$OUT/pool-fapi fapi_wrk "$1" 32 -s tests/bench/pool_post.lua \
	    "$gate_base"
	bench_fapi_fresh "$1" "$iat"
	bench_pss gate
}

# fapi_basic_run LABEL: the Basic client's refresh grant, not rotated
# (bench_refresh_kept's client and tokens), for FAPI_SECS.
fapi_basic_run() {
	TOKENS=$OUT/tokens-kept REUSE=1 \
	    BASIC=$(printf 'bench-kept:bench-kept-secret' | base64) \
	    fapi_wrk "$1" 32 -s tests/bench/refresh.lua "$gate_base"
	bench_pss gate
}

bench_fapi_token() {
	[ -n "${FAPI_JKT:-}" ] || fapi_key
	"$BIN/psd2ctl" -c conf/bench-gate.conf tpp add --name "Bench FAPI" \
	    --org-id PSDDE-BAFIN-990002 --client-id bench-fapi \
	    --secret bench-fapi-secret \
	    --redirect-uri http://127.0.0.1:8000/callback >/dev/null
	for step in "jwks bench-fapi $OUT/dpop.jwks" \
	    "auth-method bench-fapi private_key_jwt" \
	    "refresh-rotation bench-fapi off"; do
		# shellcheck disable=SC2086
		"$BIN/psd2ctl" -c conf/bench-gate.conf tpp $step >/dev/null
	done
	bench_refresh_tokens "$OUT/tokens-fapi" bench-fapi "$PSUS"
	FAPI_ISSUER=$(curl -s "$gate_base/.well-known/oauth-authorization-server" |
	    /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["issuer"])')
	failed_before=$BENCH_FAILED
	fapi_basic_run "token: refresh, not rotated, Basic"
	k1=$RES
	fapi_token_run "token: refresh, private_key_jwt + DPoP"
	f1=$RES
	fapi_token_run "token: refresh, private_key_jwt + DPoP, again"
	f2=$RES
	fapi_basic_run "token: refresh, not rotated, Basic, again"
	k2=$RES
	if [ "$BENCH_FAILED" != "$failed_before" ]; then
		echo "private_key_jwt + DPoP: not compared (a run above failed)"
		return 0
	fi
	pct=$(awk -v k1="$k1" -v k2="$k2" -v f1="$f1" -v f2="$f2" \
	    'BEGIN { printf "%.0f", 100 * (f1 + f2) / (k1 + k2) }')
	if [ "$pct" -ge 70 ]; then
		echo "private_key_jwt + DPoP: $pct% of the Basic rate (target >= 70%): ok"
	else
		echo "private_key_jwt + DPoP: $pct% of the Basic rate (target >= 70%): BELOW TARGET"
		bench_fail "private_key_jwt + DPoP: $pct% of the Basic rate (target >= 70%)"
	fi
}
