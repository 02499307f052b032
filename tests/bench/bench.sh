#!/bin/sh
# make bench: wrk against the static route (the framework's ceiling) and
# the endpoints in one run, side by side, plus pgbench with the write
# pattern of one refresh grant (the database's durable-commit ceiling).
# Not a test: it prints figures. BENCH_SECONDS (default 10) per scenario.
set -eu
cd "$(dirname "$0")/../.."
BIN=${PSD2_BIN_DIR:-build/bin}
CONF=conf/bench.conf
SECS=${BENCH_SECONDS:-10}
PORT=18089
BASE=http://127.0.0.1:$PORT
OUT=var/bench
mkdir -p "$OUT"
PSQL="psql -X -qAt -h 127.0.0.1 -p 54329 -U psd2gate -d psd2gate"

gate=
. tests/bench/lib.sh
trap 'kill $gate 2>/dev/null; wait $gate 2>/dev/null; rm -f "$CONF"' EXIT INT TERM
bench_instance "$PORT" "$CONF" "$OUT/server.log"

# A pool of refresh tokens for anna's consent, made directly in the
# database (the login flow would take minutes for 60,000 of them).
tokens=$(( SECS * 6000 ))
$PSQL <<SQL > "$OUT/tokens"
INSERT INTO consent (id, psu_id, client_id, scopes, valid_until, sca_at)
SELECT '00000000-0000-4000-8000-00000000bec0', id, 'sandbox-tpp',
    '{ACCOUNT_INFORMATION}', current_date + 90, now()
FROM psu WHERE username = 'anna'
ON CONFLICT (id) DO UPDATE SET status = 'valid';
DELETE FROM token WHERE consent_id = '00000000-0000-4000-8000-00000000bec0';
CREATE TEMP TABLE t AS SELECT gen_random_uuid()::text AS tok
    FROM generate_series(1, $tokens);
INSERT INTO token (token_hash, kind, family, client_id, consent_id, scopes,
    expires_at)
SELECT sha256(convert_to(tok, 'UTF8')), 'refresh', gen_random_uuid(),
    'sandbox-tpp', '00000000-0000-4000-8000-00000000bec0',
    '{ACCOUNT_INFORMATION}', now() + interval '1 day' FROM t;
SELECT tok FROM t;
SQL

run() {
	name=$1; conns=$2; shift 2
	line=$(wrk -t2 -c"$conns" -d"${SECS}s" --latency -s tests/bench/report.lua "$@" 2>&1 |
	    grep '^RESULT' || echo "RESULT 0 0 -1")
	set -- $line
	printf '%-34s %6s conns %10s req/s %9s ms p99 %6s errors\n' "$name" "$conns" "$2" "$3" "$4"
}

echo "psd2gate bench ($SECS s per run, 2 wrk threads, $(nproc) cores shared with the server and PostgreSQL)"
run "static GET /health" 32 "$BASE/health"
run "static GET /health" 64 "$BASE/health"
run "login page (authorize)" 64 \
    "$BASE/auth/oauth/authorize?response_type=code&client_id=sandbox-tpp&redirect_uri=http%3A%2F%2F127.0.0.1%3A8000%2Fcallback&scope=ACCOUNT_INFORMATION&state=bench"
TOKENS=$OUT/tokens BASIC=$(printf 'sandbox-tpp:sandbox-secret' | base64) \
    run "token: refresh grant" 32 -s tests/bench/refresh.lua "$BASE"
if [ -x tests/bench/ais.sh ]; then
	BENCH_BASE=$BASE BENCH_CONF=$CONF sh tests/bench/ais.sh || true
fi
if [ -x tests/bench/tpp.sh ]; then
	BENCH_BASE=$BASE BENCH_CONF=$CONF sh tests/bench/tpp.sh || true
fi

# pgbench: the same write pattern as a refresh grant, alone.
$PSQL -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS bench_token" -c "CREATE TABLE bench_token (LIKE token INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)"
pg=$(/usr/lib/postgresql/*/bin/pgbench -n -h 127.0.0.1 -p 54329 -U psd2gate -c 32 -j 2 -T "$SECS" \
    -f tests/bench/pgbench-refresh.sql psd2gate 2>&1 | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
printf '%-34s %6s conns %10.0f tx/s   (durable commits, no HTTP)\n' "pgbench: refresh write pattern" 32 "${pg:-0}"
$PSQL -c "DROP TABLE bench_token"
