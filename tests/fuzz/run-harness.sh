#!/bin/sh
# Runs one libFuzzer harness and prints one closing line:
#   fuzz-NAME: N executions, N crashes
# (crashes: the reproducers libFuzzer wrote in this run: crash-, leak-,
# timeout-, oom- files). Reproducers and the log go to OUTDIR (under
# build/, never the current folder). Exits non-zero on a crash, a
# sanitizer report or a harness that did not run.
# Usage: tests/fuzz/run-harness.sh NAME BINARY SECONDS CORPUS OUTDIR [libFuzzer args]
set -u
name=$1 bin=$2 secs=$3 corpus=$4 outdir=$5
shift 5
mkdir -p "$corpus" "$outdir"
log=$outdir/$name.log
before=$(ls "$outdir" | grep -cE "^$name-(crash|leak|timeout|oom)-")
"$bin" -max_total_time="$secs" -artifact_prefix="$outdir/$name-" "$@" \
    "$corpus" >"$log" 2>&1
rc=$?
after=$(ls "$outdir" | grep -cE "^$name-(crash|leak|timeout|oom)-")
crashes=$((after - before))
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
if [ -z "$runs" ]; then
	# Stopped early (a finding): the last status line has the count.
	runs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" | tail -n 1)
fi
runs=${runs:-0}
if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then
	crashes=1	# a report without a reproducer still is a finding
fi
echo "fuzz-$name: $runs executions, $crashes crashes"
if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ] || [ "$runs" -eq 0 ]; then
	tail -n 40 "$log"
	echo "fuzz-$name: FAILED (log $log; reproducers $outdir/$name-*)"
	exit 1
fi
exit 0
