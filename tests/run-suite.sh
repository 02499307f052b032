#!/bin/sh
# Runs one pytest suite (tests/<suite>) with Debian's /usr/bin/python3 and
# prints exactly one closing line:  <label>: N passed, N failed[, N skipped]
# Counts come from pytest's JUnit XML, not from scraping its output.
# "No tests collected" (pytest exit 5) and any other pytest error without
# counted failures are failures too. Exits non-zero on any failure.
#
# Usage: tests/run-suite.sh SUITE [pytest arguments...]
# Environment: PSD2_BIN_DIR (default build/bin), PSD2_SUITE_LABEL (default
# SUITE; "api-asan" etc. for the sanitizer run).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
suite=${1:?usage: tests/run-suite.sh SUITE [pytest args]}
shift
label=${PSD2_SUITE_LABEL:-$suite}
export PSD2_SUITE_LABEL="$label"
export PSD2_BIN_DIR="${PSD2_BIN_DIR:-build/bin}"
export PYTHONDONTWRITEBYTECODE=1
mkdir -p var/test-logs
xml="var/test-logs/$label-junit.xml"
rm -f "$xml"

/usr/bin/python3 -m pytest -q -p no:cacheprovider -rfE --tb=short \
    --junitxml="$xml" -o junit_family=xunit2 "tests/$suite" "$@"
rc=$?

counts=$(/usr/bin/python3 - "$xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
p = f = s = 0
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("0 0 0 0")
    sys.exit(0)
for tc in root.iter("testcase"):
    tags = {c.tag for c in tc}
    if tags & {"failure", "error"}:
        f += 1
    elif "skipped" in tags:
        s += 1
    else:
        p += 1
# Errors outside any test case (collection errors) show on the suite.
extra = 0
for ts in root.iter("testsuite"):
    n_err = int(ts.get("errors", 0)) + int(ts.get("failures", 0))
    extra = max(extra, n_err - f)
print(p, f + max(extra, 0), s, 1)
PY
)
set -- $counts
passed=$1 failed=$2 skipped=$3
note=""
if [ "$rc" -eq 5 ]; then
	failed=$((failed + 1)); note=" (no tests collected)"
elif [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1; note=" (pytest exited $rc)"
fi
line="$label: $passed passed, $failed failed"
[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
echo "$line$note"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
