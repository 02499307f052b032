#!/bin/sh
# Keeps the makefiles right for a new machine: nothing may read the flags
# of an installed package (pkg-config, pg_config) while make reads the
# makefiles, because `make run` and `make test` install the packages
# (deps) only after that; such a flag comes out empty on a bare machine
# and the first build fails. One line per check (tests/build/run.sh
# counts them).
#
# How: fake pkg-config and pg_config first on PATH, which log each call
# and fail. Parsing every makefile entry point, and the dry runs of `make
# run` and `make test` (whose sub-makes parse again), must not call them.
# Then the other side: the device objects that need libusb and umockdev
# build with the real tools (the flags arrive when the recipe runs), and
# fail with the fakes (so the flags do come from those tools).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
passed=0
failed=0
tmp=$(mktemp -d /tmp/psd2-mkcheck.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
log=var/test-logs/build
mkdir -p "$log"

mkdir -p "$tmp/fake"
for tool in pkg-config pg_config; do
	cat >"$tmp/fake/$tool" <<FAKE
#!/bin/sh
echo "$tool \$*" >>"$tmp/calls"
exit 1
FAKE
	chmod +x "$tmp/fake/$tool"
done
fakepath=$tmp/fake:$PATH

ok() { passed=$((passed + 1)); echo "build: $1: ok"; }
bad() { failed=$((failed + 1)); echo "build: $1: FAILED: $2"; }

# parse NAME MAKE-ARGS...: make with the fakes must not call them.
parse() {
	name=$1; shift
	: >"$tmp/calls"
	if ! PATH=$fakepath make --no-print-directory "$@" \
	    >"$log/$name.out" 2>&1; then
		bad "$name" "make failed (see $log/$name.out)"
	elif [ -s "$tmp/calls" ]; then
		bad "$name" "read at parse time: $(sort -u "$tmp/calls" | tr '\n' ';')"
	else
		ok "$name"
	fi
}

probe='psd2-parse-probe: ; @:'
parse parse-Makefile --eval "$probe" psd2-parse-probe
for mk in device/device.mk tests/unit/unit.mk tests/tpp/tpp.mk \
    tests/kore/kore.mk; do
	parse "parse-$(basename "$mk" .mk).mk" -f "$mk" --eval "$probe" \
	    psd2-parse-probe
done
# Dry runs: -n still runs the $(MAKE) lines, so the sub-makes of deps and
# all parse the makefiles here too; the fakes must stay silent.
parse dry-run-run -n run
parse dry-run-test -n test

# deps comes before anything is built, in both commands.
for goal in run test; do
	out=$log/dry-run-$goal.out
	d=$(grep -n 'tests/deps.sh' "$out" | head -n 1 | cut -d: -f1)
	c=$(grep -nE '^(gcc|cc|clang|cp -R|for p in)' "$out" | head -n 1 | cut -d: -f1)
	if [ -n "$d" ] && { [ -z "$c" ] || [ "$d" -lt "$c" ]; }; then
		ok "deps-first-$goal"
	else
		bad "deps-first-$goal" "tests/deps.sh at line ${d:-none}, first build step at ${c:-none} of $out"
	fi
done

# Recipe time: the real flags reach the compiler...
objs="$tmp/b/device/device/deviced_usb.o $tmp/b/device/device/emu/usbemu.o"
if make --no-print-directory BUILD="$tmp/b" $objs >"$log/recipe-real.out" 2>&1; then
	ok recipe-flags-real
else
	bad recipe-flags-real "device objects do not build (see $log/recipe-real.out)"
fi
# ...and without them (the fakes) the same objects cannot build.
rm -rf "$tmp/b"
if PATH=$fakepath make --no-print-directory BUILD="$tmp/b" $objs \
    >"$log/recipe-fake.out" 2>&1; then
	bad recipe-flags-fake "built without pkg-config's flags: they are not where the test expects"
else
	ok recipe-flags-fake
fi

# The pattern a review hook looks for: an assignment of $(shell pkg-config.
lines=$(grep -nE '^[^#]*:?=[[:space:]]*\$\(shell[[:space:]]+(pkg-config|pg_config)' \
    Makefile $(find . -name '*.mk' -not -path './build*' -not -path './var/*') 2>/dev/null)
if [ -z "$lines" ]; then
	ok no-shell-pkg-config-assignment
else
	bad no-shell-pkg-config-assignment "$lines"
fi

[ "$failed" = 0 ]
