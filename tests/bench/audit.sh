#!/bin/sh
# make bench-audit: only the audit section of make bench (tests/bench/pis.sh,
# pis_audit_cost) on a bench database of its own, for working on the
# audit rows' cost without the rest of the bench (minutes, not half an
# hour). BENCH_SECONDS (default 10) per run, BENCH_PSUS (default 200).
# BENCH_AUDIT_WAITS=1 also samples the backends' wait events during the
# runs (var/bench/waits-on.txt, waits-off.txt).
set -eu
cd "$(dirname "$0")/../.."
BIN=${PSD2_BIN_DIR:-build/bin}
SECS=${BENCH_SECONDS:-10}
PSUS=${BENCH_PSUS:-200}
OUT=var/bench
mkdir -p "$OUT"
. tests/bench/lib.sh
trap 'bench_cleanup' EXIT
trap 'bench_cleanup; exit 130' INT
trap 'bench_cleanup; exit 143' TERM

psql -X -q -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres \
    -c "DROP DATABASE IF EXISTS psd2gate WITH (FORCE)" \
    -c "CREATE DATABASE psd2gate OWNER psd2gate"
sh tests/pki/mint.sh sandbox var/sandbox >/dev/null
bench_conf conf/bench-gate.conf 8080 yes
ctl() { "$BIN/psd2ctl" -c conf/bench-gate.conf "$@"; }
for step in keys-init migrate sandbox-seed; do
	ctl "$step" >/dev/null 2>"$OUT/ctl.err" || { cat "$OUT/ctl.err" >&2; exit 1; }
done
ctl psu add bench-template --password bench-password-1 \
    --totp-secret JBSWY3DPEHPK3PXP --name "Bench Template" >/dev/null
$PSQL -v psus="$PSUS" -v txn=5 -f tests/bench/data.sql
$PSQL <<'SQL'
INSERT INTO device (serial, model, firmware, public_key, attestation,
    attestation_ok, host, status, psu_id, enrolled_at)
SELECT 'BENCH' || substr(p.username, 11), 'bench', '1',
    '\x04'::bytea || sha256(convert_to(p.username, 'UTF8'))
	|| sha256(convert_to(p.username || '.', 'UTF8')),
    '\x00'::bytea, true, 'bench', 'active', p.id, now()
FROM psu p WHERE p.username LIKE 'bench-psu-%'
ON CONFLICT (serial) DO NOTHING;
SQL
echo "psd2gate audit bench ($SECS s per run, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
. tests/bench/pis.sh
pis_setup
pis_audit_cost
if [ -n "$BENCH_FAILED" ]; then
	echo "bench-audit: FAILED measurements:$BENCH_FAILED" >&2
	exit 1
fi
