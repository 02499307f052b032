#!/bin/sh
# Runs one pytest suite (tests/<suite>) with Debian's /usr/bin/python3 and
# prints exactly one closing line:
#   <label>: N passed, N failed[, N skipped as expected]
# Counts come from pytest's JUnit XML, not from scraping its output.
# "No tests collected" (pytest exit 5) and any other pytest error without
# counted failures are failures too. A skip counts as a failure unless its
# reason starts with "expected: " (then it is counted and named). Exits
# non-zero on any failure. The suite runs inside the test PostgreSQL
# cluster (tests/pgcluster.sh run: started here and stopped afterwards,
# or the one an enclosing `make test` holds).
#
# Usage: tests/run-suite.sh SUITE [pytest arguments...]
# Environment: PSD2_BIN_DIR (default build/bin), PSD2_SUITE_LABEL (default
# SUITE; "api-asan" etc. for the sanitizer run).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
suite=${1:?usage: tests/run-suite.sh SUITE [pytest args]}
if [ -z "${PSD2_IN_CLUSTER:-}" ]; then
	PSD2_IN_CLUSTER=1 exec sh tests/pgcluster.sh run sh "$top/tests/run-suite.sh" "$@"
fi
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

counts=$(/usr/bin/python3 - "$xml" "$label" <<'PY'
import sys
import xml.etree.ElementTree as ET
p = f = s = 0
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("0 0 0")
    sys.exit(0)
for tc in root.iter("testcase"):
    tags = {c.tag: c for c in tc}
    name = "%s::%s" % (tc.get("classname"), tc.get("name"))
    if "failure" in tags or "error" in tags:
        f += 1
    elif "skipped" in tags:
        why = tags["skipped"].get("message", "")
        if why.startswith("expected: "):
            s += 1
            print("%s: skipped %s (%s)" % (sys.argv[2], name, why),
                  file=sys.stderr)
        else:
            f += 1
            print("%s: UNEXPECTED SKIP %s: %s" % (sys.argv[2], name, why),
                  file=sys.stderr)
    else:
        p += 1
# Errors outside any test case (collection errors) show on the suite.
extra = 0
for ts in root.iter("testsuite"):
    n_err = int(ts.get("errors", 0)) + int(ts.get("failures", 0))
    extra = max(extra, n_err - f)
print(p, f + max(extra, 0), s)
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
[ "$skipped" -gt 0 ] && line="$line, $skipped skipped as expected"
echo "$line$note"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
