#!/bin/sh
# Runs every device test: cmocka unit tests, umockdev device tests, the
# emulator harness and psd2-emu, and psd2-deviced end to end against a
# throwaway PostgreSQL database (psd2gate_devtest, created here, never the
# shared psd2gate database). Ends with "device: N passed, N failed".
# Environment: BUILD (default build), SANITIZE=1 for ASan+UBSan binaries.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
BUILD=${BUILD:-build}
SANITIZE=${SANITIZE:-0}
T=$BUILD/device/tests
passed=0
failed=0

# umockdev's preload; under ASan the ASan runtime must come first.
preload=libumockdev-preload.so.0
if [ "$SANITIZE" = 1 ]; then
	preload="$(gcc -print-file-name=libasan.so):$preload"
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
	export LSAN_OPTIONS="suppressions=$top/tests/device/lsan.supp:print_suppressions=0"
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
export PSD2_DEV_TESTKEYS="$top/device/testkeys"
export PSD2_DEVICED="$top/$BUILD/bin/psd2-deviced"
# GLib warns that the preload's setenv is not thread-safe (harmless).
export G_DEBUG=
log=$BUILD/device/test-logs
mkdir -p "$log"

# Counts a cmocka binary's results; a crash without a summary is a failure.
run_cmocka() {
	name=$1; shift
	out=$log/$name.log
	"$@" >"$out" 2>&1
	rc=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	# A skipped case is not a pass: nothing here is expected to skip.
	sk=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	p=${p:-0}; f=$(( ${f:-0} + ${sk:-0} ))
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	echo "device: $name: $p passed, $f failed (log $out)"
	if [ "$f" != 0 ]; then
		grep -E '^\[  (FAILED|ERROR) |error:|ERROR|runtime error' "$out" | head -n 20
	fi
}

check() {
	name=$1; shift
	if "$@" >>"$log/$name.log" 2>&1; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "device: $name: FAILED (log $log/$name.log)"
	fi
}

# The examples as an independent reading of PROTOCOL.md (Python), and the
# payee-name vectors from Python's Unicode data (device/PROTOCOL.md 5.3.2).
check examples /usr/bin/python3 tests/device/examples_gen.py --check
export PSD2_DEVTEXT_VECTORS="$log/devtext-vectors.txt"
if ! /usr/bin/python3 tests/device/devtext_vectors.py "$PSD2_DEVTEXT_VECTORS" \
    >>"$log/frame.log" 2>&1; then
	echo "device: devtext vectors could not be made (see $log/frame.log)"
	failed=$((failed + 1))
fi
run_cmocka frame "$T/test_frame"
run_cmocka sig "$T/test_sig"
run_cmocka usb env LD_PRELOAD="$preload" "$T/test_usb"

# The emulator harness and the psd2-emu control command.
: >"$log/emuhost.log"
emudir=$(mktemp -d /tmp/psd2emu.XXXXXX)
LD_PRELOAD="$preload" "$BUILD/bin/psd2-emuhost" --state "$emudir" \
    --socket "$emudir/emu.sock" \
    --manufacturer-key device/testkeys/manufacturer-test-key.pem \
    EMU0001,EMU0002 >>"$log/emuhost.log" 2>&1 &
emupid=$!
export PSD2_EMU_SOCKET="$emudir/emu.sock"
i=0
while [ ! -S "$emudir/emu.sock" ] && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
emu() { "$BUILD/bin/psd2-emu" "$@"; }
check emu-show sh -c "'$BUILD/bin/psd2-emu' show EMU0001 | grep -q '^READY EMU0001 KEY [0-9A-F]\{4\} '"
check emu-list sh -c "'$BUILD/bin/psd2-emu' list | grep -qx 'EMU0001 EMU0002'"
check emu-press-idle sh -c "! '$BUILD/bin/psd2-emu' press EMU0001"
check emu-pin-idle sh -c "'$BUILD/bin/psd2-emu' pin EMU0001 1234 2>&1 | grep -q 'nothing to enter'"
check emu-pin-format sh -c "! '$BUILD/bin/psd2-emu' pin EMU0001 12x4"
check emu-unlock-unlocked sh -c "! '$BUILD/bin/psd2-emu' unlock EMU0001 12345678 4321"
check emu-setcounter sh -c "'$BUILD/bin/psd2-emu' setcounter EMU0002 7 && '$BUILD/bin/psd2-emu' counter EMU0002 | grep -qx 7 && ! '$BUILD/bin/psd2-emu' setcounter EMU0002 x7"
check emu-unplug sh -c "'$BUILD/bin/psd2-emu' unplug EMU0002 && '$BUILD/bin/psd2-emu' show EMU0002 | grep -q '(unplugged)'"
check emu-plug sh -c "'$BUILD/bin/psd2-emu' plug EMU0002 && '$BUILD/bin/psd2-emu' list | grep -qx 'EMU0001 EMU0002'"
check emu-fault sh -c "'$BUILD/bin/psd2-emu' fault EMU0001 stall && ! '$BUILD/bin/psd2-emu' fault EMU0001 melt"
check emu-unknown sh -c "! '$BUILD/bin/psd2-emu' show NOSUCH"
check emu-state test -s "$emudir/EMU0001.state"
kill -TERM "$emupid" 2>/dev/null
wait "$emupid" 2>/dev/null
rm -rf "$emudir"
unset PSD2_EMU_SOCKET

# psd2-deviced end to end, in its own database of the shared cluster.
if conninfo=$(sh tests/device/testdb.sh psd2gate_devtest 2>>"$log/pg.log"); then
	export PSD2_DEVTEST_DB="$conninfo"
fi
if [ -n "${PSD2_DEVTEST_DB:-}" ]; then
	run_cmocka e2e env LD_PRELOAD="$preload" "$T/test_e2e"
else
	echo "device: e2e: no test database (see $log/pg.log)"
	failed=$((failed + 1))
fi

label=device
[ "$SANITIZE" = 1 ] && label=device-asan
echo "$label: $passed passed, $failed failed"
[ "$failed" = 0 ]
