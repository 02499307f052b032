#!/bin/sh
# Every program `make all` and `make device-tests` build carries the same
# hardening (src/build/flags.mk), read from the binaries themselves with
# readelf:
#
#   pie        an ELF of type DYN flagged PIE (position-independent)
#   relro      a GNU_RELRO segment (relocations read-only after start)
#   now        BIND_NOW (FLAGS BIND_NOW or FLAGS_1 NOW): all resolved at
#              start, so the whole GOT is read-only
#   ssp-units  every compilation unit with debug information, Kore's and
#              the common library's included, was compiled with
#              -fstack-protector-strong or -all (DW_AT_producer): a unit
#              built without it cannot hide behind another one that
#              imports __stack_chk_fail
#   ssp        __stack_chk_fail imported (some function has a canary)
#   fortify    at least one fortified libc call (__*_chk) imported
#
# Exempt, built for coverage and sanitizers only: the unit tests
# ($BUILD/unit), the TPP unit tests ($BUILD/tpp) and the libFuzzer
# harnesses (*/fuzz/). psd2-embed, the build's own tool, has no function
# that needs a canary (no local array), so -fstack-protector-strong adds
# none: it must pass ssp-units, not ssp. The sanitizer build (build-asan)
# is not read: GCC's ASan start-up unit (asan_preinit, C++) is built
# without a stack protector, and those binaries never ship.
#
# First a control: a program built without any of it must fail every
# check, so that a check which cannot fail does not pass unnoticed.
#
# Usage: check-hardening.sh [BUILD]   (default build; run `make all` first)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
build=${1:-${BUILD:-build}}
failed=0
tmp=$(mktemp -d /tmp/psd2-harden.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

ok() { echo "build: $1: ok"; }
bad() { failed=$((failed + 1)); echo "build: $1: FAILED: $2"; }

# The programs of make all and make device-tests; each must exist.
PROGRAMS="bin/psd2gate bin/psd2ctl bin/psd2-deviced bin/psd2-emu
bin/psd2-emuhost bin/psd2-embed device/tests/test_frame
device/tests/test_sig device/tests/test_usb device/tests/test_e2e"
# Built by other targets (test-kore, bench-device): checked when present.
OPTIONAL="tests/kore/echo_app device/tests/bench_device"
NO_CANARY="bin/psd2-embed"

# lacks BINARY: the checks BINARY fails, space-separated ("" if none).
lacks() {
	b=$1
	miss=""
	readelf -hW "$b" 2>/dev/null | grep -Eq 'Type:[[:space:]]+DYN' &&
	    readelf -dW "$b" | grep -Eq 'FLAGS_1.*PIE' || miss="$miss pie"
	readelf -lW "$b" | grep -q GNU_RELRO || miss="$miss relro"
	readelf -dW "$b" | grep -Eq '\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW|\(BIND_NOW\)' ||
	    miss="$miss now"
	readelf --debug-dump=info "$b" 2>/dev/null |
	    grep -E 'DW_AT_producer.*GNU C' >"$tmp/producers"
	if [ ! -s "$tmp/producers" ] ||
	    grep -Evq -- '-fstack-protector-(strong|all)' "$tmp/producers"; then
		miss="$miss ssp-units"
	fi
	readelf --dyn-syms -W "$b" >"$tmp/syms"
	grep -Eq ' __stack_chk_fail(@|$)' "$tmp/syms" || miss="$miss ssp"
	grep -Eq ' __[a-z0-9_]+_chk(@|$)' "$tmp/syms" || miss="$miss fortify"
	echo "$miss"
}

# The control: no PIE, lazy binding, no RELRO, no canary, no fortify.
cat >"$tmp/weak.c" <<'EOF'
#include <stdio.h>
#include <string.h>
int
main(int argc, char **argv)
{
	char	buf[16];

	strcpy(buf, argv[0]);
	printf("%s %d\n", buf, argc);
	return (0);
}
EOF
if ! cc -g -O2 -fno-stack-protector -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=0 \
    -fno-pie -no-pie -Wl,-z,norelro -Wl,-z,lazy -o "$tmp/weak" \
    "$tmp/weak.c" 2>"$tmp/cc.err"; then
	bad control "the unhardened control does not build: $(cat "$tmp/cc.err")"
elif [ "$(lacks "$tmp/weak")" != " pie relro now ssp-units ssp fortify" ]; then
	bad control "an unhardened program only fails:$(lacks "$tmp/weak")"
else
	ok control
fi

for p in $PROGRAMS $OPTIONAL; do
	b=$build/$p
	case " $(echo $OPTIONAL) " in
	*" $p "*) [ -f "$b" ] || continue ;;
	esac
	if [ ! -f "$b" ]; then
		bad "$p" "not built ($b; run make all first)"
		continue
	fi
	miss=$(lacks "$b")
	case " $NO_CANARY " in
	*" $p "*) miss=$(echo "$miss" | sed 's/ ssp\( \|$\)/\1/') ;;
	esac
	if [ -z "$miss" ]; then
		ok "$p"
	else
		bad "$p" "lacks$miss"
	fi
done

# Nothing escapes the list: every other ELF executable in the build tree
# is one of the exempt test programs or inside Kore's own tree.
find "$build" -type f -perm -u+x ! -name '*.so' 2>/dev/null | sort |
while read -r f; do
	rel=${f#"$build"/}
	case "$rel" in
	unit/*|tpp/*|*/fuzz/*|fuzz/*|kore/*|lib/*) continue ;;
	esac
	case " $(echo $PROGRAMS $OPTIONAL) " in *" $rel "*) continue ;; esac
	readelf -hW "$f" >/dev/null 2>&1 || continue
	echo "$rel"
done >"$tmp/unlisted"
if [ -s "$tmp/unlisted" ]; then
	bad every-program-listed "not checked: $(tr '\n' ' ' <"$tmp/unlisted")"
else
	ok every-program-listed
fi

# Defined once: no makefile but src/build/flags.mk names these flags.
others=$(grep -lE -- '-fstack-protector|_FORTIFY_SOURCE|-z,relro|-z,now|(^|[[:space:]])-f?pie' \
    Makefile $(find src device tests -name '*.mk') 2>/dev/null |
    grep -v '^src/build/flags.mk$')
if [ -z "$others" ]; then
	ok flags-defined-once
else
	bad flags-defined-once "also named in: $others"
fi

[ "$failed" = 0 ]
