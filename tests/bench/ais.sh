#!/bin/sh
# AIS benchmark (issue 3): wrk against the static route, the account list
# and a transactions page (50 items) in the same run, with a valid token,
# 64 connections. Called by tests/bench/bench.sh (make bench) with
# BENCH_BASE (a running psd2gate) and BENCH_CONF; run alone it starts its
# own instance from conf/sandbox.conf on port 18088.
#
# The token is inserted straight into PostgreSQL for anna's sandbox
# accounts (a consent with both accounts, SCA "now": the PSU counts as
# present, so the 4-a-day unattended limit does not apply; its SHA-256
# only is stored, as the service does). Every request carries a fresh
# x-request-id, so each call does the full hot path: bearer check, replay
# mark (unlogged), consent, data, access record (synchronous_commit off).
# BENCH_SECONDS (default 10) per run.
set -eu
cd "$(dirname "$0")/../.."
BIN=${PSD2_BIN_DIR:-build/bin}
SECS=${BENCH_SECONDS:-10}
CONNS=${BENCH_CONNS:-64}
OUT=var/bench
mkdir -p "$OUT"
PSQL="psql -X -qAt -h 127.0.0.1 -p 54329 -U psd2gate -d psd2gate"
. tests/bench/lib.sh
gate=

if [ -z "${BENCH_BASE:-}" ]; then
	PORT=18088
	BENCH_BASE=http://127.0.0.1:$PORT
	BENCH_CONF=conf/bench-ais.conf
	trap 'kill $gate 2>/dev/null; wait $gate 2>/dev/null; rm -f "$BENCH_CONF"' EXIT INT TERM
	bench_instance "$PORT" "$BENCH_CONF" "$OUT/ais-server.log"
fi

CONSENT=00000000-0000-4000-8000-0000000a1500
TOKEN=$(bench_access_token "$CONSENT")
export AIS_TOKEN="$TOKEN"

check() {
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$BENCH_BASE$1")
	[ "$code" = 200 ] || { echo "ais bench: $1 answered $code" >&2; exit 1; }
}
TX=/auth/v1/psd2/account/DE-anna-giro/transactions
LIST=/auth/v1/psd2/account/account-list
check "$LIST"
check "$TX"

run() {
	name=$1; shift
	line=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency "$@" 2>&1 |
	    grep '^RESULT' || echo "RESULT 0 0 -1")
	set -- $line
	printf '%-34s %6s conns %10s req/s %9s ms p99 %6s errors\n' "$name" "$CONNS" "$2" "$3" "$4"
}

before=$($PSQL -c "SELECT count(*) FROM access_log WHERE consent_id = '$CONSENT'")
echo "AIS ($SECS s per run, 2 wrk threads, $(nproc) cores shared with the server and PostgreSQL)"
run "static GET /health" -s tests/bench/report.lua "$BENCH_BASE/health"
AIS_PATH=$LIST run "AIS account-list" -s tests/bench/ais.lua "$BENCH_BASE"
AIS_PATH=$TX run "AIS transactions (page of 50)" -s tests/bench/ais.lua "$BENCH_BASE"
run "static GET /health (again)" -s tests/bench/report.lua "$BENCH_BASE/health"
after=$($PSQL -c "SELECT count(*) FROM access_log WHERE consent_id = '$CONSENT'")
echo "access records written: $((after - before))"
