#!/bin/sh
# The two package sets of tests/deps.sh: `make run` installs the run set
# only, `make test` adds the test set.
#
#   deps-sets-apart       no package is in both sets
#   deps-run-no-test-tool no test tool in the run set (the ones a new
#                         user saw installed by make run: Chromium, its
#                         driver, wrk, Prometheus, HAProxy, cmocka,
#                         pytest, and clang for the fuzzers)
#   deps-run-builds-all   every package the build of `make all` names is
#                         in the run set or pulled in by it: the dry run
#                         of all into an empty folder lists the libraries
#                         (-lX), pkg-config modules, tools and Kore's
#                         source; each file's owner (dpkg -S) must be in
#                         the run set's dependency closure (apt-cache)
#   deps-run-sandbox      the same for what conf/sandbox-run.sh and
#                         device/sandbox-up.sh start: PostgreSQL's
#                         initdb, openssl, umockdev's preload library
#   deps-make-run-set     make run installs the run set, make test the
#                         test set (their dry runs)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
failed=0
tmp=$(mktemp -d /tmp/psd2-deps.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

ok() { echo "build: $1: ok"; }
bad() { failed=$((failed + 1)); echo "build: $1: FAILED: $2"; }

sh tests/deps.sh --list run | sort -u >"$tmp/run"
sh tests/deps.sh --list test-only | sort -u >"$tmp/test"

both=$(comm -12 "$tmp/run" "$tmp/test" | tr '\n' ' ')
if [ -s "$tmp/run" ] && [ -s "$tmp/test" ] && [ -z "$both" ]; then
	ok deps-sets-apart
else
	bad deps-sets-apart "in both sets (or a set empty): $both"
fi

tools="chromium chromium-driver wrk prometheus haproxy libcmocka-dev
python3-pytest python3-selenium clang"
wrong=""
for t in $tools; do
	grep -qx "$t" "$tmp/run" && wrong="$wrong $t"
	grep -qx "$t" "$tmp/test" || wrong="$wrong $t(not in the test set)"
done
if [ -z "$wrong" ]; then
	ok deps-run-no-test-tool
else
	bad deps-run-no-test-tool "$wrong"
fi

# The run set and everything it depends on (installed or not).
# shellcheck disable=SC2046
apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances $(cat "$tmp/run") 2>/dev/null |
    sed -E 's/^ *\|?[A-Za-z]+: //; s/^ +//; s/[<>]//g; s/:.*//' |
    sort -u >"$tmp/closure"

# owned FILE...: each file's packages; "-" for a file no package owns.
owned() {
	for f in "$@"; do
		# Merged /usr: dpkg may know the file under the other name.
		o=$( { dpkg -S "$f" || dpkg -S "/usr$f"; } 2>/dev/null |
		    grep -v '^diversion' | sed 's/: .*//; s/, /\n/g' |
		    sed 's/:[a-z0-9]*$//')
		if [ -z "$o" ]; then
			echo "$f:-"
		else
			echo "$o" | sed "s|^|$f:|"
		fi
	done
}

# covered NAME: the files of $tmp/files each have an owner in the closure.
covered() {
	name=$1
	miss=""
	for f in $(cut -d: -f1 "$tmp/owners" | sort -u); do
		found=no
		for p in $(grep "^$f:" "$tmp/owners" | cut -d: -f2); do
			grep -qx "$p" "$tmp/closure" && found=yes
		done
		[ "$found" = yes ] ||
		    miss="$miss $f($(grep "^$f:" "$tmp/owners" | cut -d: -f2 | tr '\n' ' '))"
	done
	if [ -z "$miss" ]; then
		ok "$name"
	else
		bad "$name" "not from the run set:$miss"
	fi
}

# The build of all, from nothing: what it names (MAKE=true: Kore's own
# make, which -n would still run, has no source to read here).
if ! make --no-print-directory -n BUILD="$tmp/b" MAKE=true all >"$tmp/dry" 2>&1; then
	bad deps-run-builds-all "make -n all failed: $(tail -n 3 "$tmp/dry")"
else
	: >"$tmp/paths"
	for l in $(grep -oE '(^|[[:space:]])-l[A-Za-z0-9_.+-]+' "$tmp/dry" |
	    sed 's/^[[:space:]]*-l//' | sort -u); do
		# glibc's libpthread and libdl are archives only now.
		f=$(gcc -print-file-name="lib$l.so")
		[ "$f" = "lib$l.so" ] && f=$(gcc -print-file-name="lib$l.a")
		realpath -s -m "$f" >>"$tmp/paths"
	done
	for m in $(grep -oE 'pkg-config --(cflags|libs) [^)]*' "$tmp/dry" |
	    sed -E 's/pkg-config --(cflags|libs) //' | tr ' ' '\n' | sort -u); do
		echo "$(pkg-config --variable=pcfiledir "$m" 2>/dev/null)/$m.pc" \
		    >>"$tmp/paths"
	done
	for c in $(awk '{print $1}' "$tmp/dry" | grep -E '^[a-z][a-z0-9_+-]*$' |
	    grep -vE '^(for|do|done|if|then|fi|true|touch|mkdir|rm|cp|cd)$' |
	    sort -u) pg_config patch pkg-config; do
		case $(command -v "$c") in
		/*)	command -v "$c" >>"$tmp/paths" ;;
		*)	echo "/$c-not-found" >>"$tmp/paths" ;;
		esac
	done
	grep -q /usr/share/kore "$tmp/dry" && echo /usr/share/kore >>"$tmp/paths"
	# shellcheck disable=SC2046
	owned $(sort -u "$tmp/paths") >"$tmp/owners"
	covered deps-run-builds-all
fi

# What the sandbox starts at run time.
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
preload=$(ldconfig -p | awk '/libumockdev-preload.so.0/ {print $NF; exit}')
# shellcheck disable=SC2046
owned "$bindir/initdb" "$bindir/pg_ctl" $(command -v openssl) \
    "${preload:-libumockdev-preload.so.0}" >"$tmp/owners"
covered deps-run-sandbox

# make run and make test name their sets.
make --no-print-directory -n run >"$tmp/run.dry" 2>&1
make --no-print-directory -n test >"$tmp/test.dry" 2>&1
if grep -q 'tests/deps.sh run$' "$tmp/run.dry" &&
    ! grep -q 'tests/deps.sh test' "$tmp/run.dry" &&
    grep -q 'tests/deps.sh test$' "$tmp/test.dry"; then
	ok deps-make-run-set
else
	bad deps-make-run-set "make run: $(grep deps.sh "$tmp/run.dry" | tr '\n' ';')" \
	    "make test: $(grep deps.sh "$tmp/test.dry" | tr '\n' ';')"
fi

[ "$failed" = 0 ]
