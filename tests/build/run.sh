#!/bin/sh
# The build suite: every tests/build/check-*.sh, each printing one line
# per check ("build: NAME: ok" or "build: NAME: FAILED: why"); closes
# with "build: N passed, N failed". Logs: var/test-logs/build/.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
mkdir -p var/test-logs/build
out=var/test-logs/build/checks.out
: >"$out"
for c in tests/build/check-*.sh; do
	sh "$c" 2>&1 | tee -a "$out"
done
passed=$(grep -c '^build: .*: ok$' "$out")
failed=$(grep -c '^build: .*: FAILED' "$out")
echo "build: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
