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

bench_database "$PSUS" 5
bench_devices
echo "psd2gate audit bench ($SECS s per run, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
. tests/bench/pis.sh
pis_setup
pis_audit_cost
if [ -n "$BENCH_FAILED" ]; then
	echo "bench-audit: FAILED measurements:$BENCH_FAILED" >&2
	exit 1
fi
