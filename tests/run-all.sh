#!/bin/sh
# Runs make targets one after another, going on past failures, so that
# every suite prints its summary line; exits non-zero if any failed.
# Usage: tests/run-all.sh [--no-recap] "MAKE COMMAND" TARGET...
# Each target's output is also kept in var/test-logs/make-TARGET[-asan].log;
# at the end the summary lines ("name: N passed, N failed") are repeated.
set -u
recap=1
if [ "${1:-}" = "--no-recap" ]; then recap=0; shift; fi
make_cmd=${1:?usage: run-all.sh [--no-recap] MAKE TARGET...}
shift
top=$(cd "$(dirname "$0")/.." && pwd)
logdir=$top/var/test-logs
mkdir -p "$logdir"
case "$make_cmd" in *SANITIZE=1*) tag=-asan ;; *) tag= ;; esac

failed=""
logs=""
for t in "$@"; do
	log=$logdir/make-$t$tag.log
	rcf=$log.rc
	rm -f "$rcf"
	{ $make_cmd "$t"; echo $? >"$rcf"; } 2>&1 | tee "$log"
	rc=$(cat "$rcf" 2>/dev/null || echo 1)
	rm -f "$rcf"
	[ "$rc" = 0 ] || failed="$failed $t"
	logs="$logs $t:$log:$rc"
done

# Each suite's closing line(s) once: "name: N passed, N failed[, ...]",
# or per fuzz harness "fuzz-name: N executions, N crashes".
if [ "$recap" = 1 ]; then
	echo "==== summary ===="
	for entry in $logs; do
		t=${entry%%:*}; rest=${entry#*:}; log=${rest%:*}; rc=${rest##*:}
		grep -E '^[A-Za-z0-9_.-]+: [0-9]+ (passed, [0-9]+ failed|executions, [0-9]+ crashes)' \
		    "$log"
		if [ "$rc" != 0 ]; then
			echo "$t: FAILED (see $log)"
		fi
	done
fi
if [ -n "$failed" ]; then
	echo "failed:$failed"
	exit 1
fi
exit 0
