#!/bin/sh
# Sandbox: starts the emulated authenticator EMU0001 (psd2-emuhost, a
# umockdev testbed) with psd2-deviced inside it, in the background, and
# enrols EMU0001 and assigns it to the sandbox PSU anna. Needs the sandbox
# database migrated (psd2ctl migrate) and seeded with anna. Pids go to
# var/emu/; device/sandbox-down.sh stops both. The PIN of EMU0001 is 1234:
#   build/bin/psd2-emu show EMU0001; build/bin/psd2-emu pin EMU0001 1234
#   build/bin/psd2-emu press|decline EMU0001
set -eu
cd "$(dirname "$0")/.."
BIN=${PSD2_BIN_DIR:-build/bin}
CONF=${PSD2_DEVICE_CONF:-conf/psd2-deviced-sandbox.conf}
# psd2ctl runs as the operator's role (psd2_ctl_db), not the daemon's.
CTL_CONF=${PSD2_CTL_CONF:-conf/sandbox.conf}
SERIAL=${PSD2_EMU_SERIAL:-EMU0001}
PSU=${PSD2_EMU_PSU:-anna}
EMU=var/emu

mkdir -p "$EMU"
if [ -f "$EMU/emuhost.pid" ] && kill -0 "$(cat "$EMU/emuhost.pid")" 2>/dev/null; then
	echo "sandbox-up: already running (pid $(cat "$EMU/emuhost.pid"))"
	exit 0
fi
for b in psd2-emuhost psd2-deviced psd2-emu; do
	if [ ! -x "$BIN/$b" ]; then
		echo "sandbox-up: $BIN/$b missing (make device-all)" >&2
		exit 1
	fi
done
rm -f "$EMU/emu.sock"
# The harness owns the testbed; the daemon runs inside it, under the
# umockdev preload, unchanged.
LD_PRELOAD=libumockdev-preload.so.0 "$BIN/psd2-emuhost" --state "$EMU" \
    --socket "$EMU/emu.sock" \
    --manufacturer-key device/testkeys/manufacturer-test-key.pem --verbose \
    "$SERIAL" -- "$BIN/psd2-deviced" --foreground --conf "$CONF" \
    >>"$EMU/emu.log" 2>&1 &
echo $! >"$EMU/emuhost.pid"

i=0
while [ ! -S "$EMU/emu.sock" ] || ! pgrep -P "$(cat "$EMU/emuhost.pid")" >/dev/null; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 "$(cat "$EMU/emuhost.pid")" 2>/dev/null; then
		echo "sandbox-up: the emulator did not start (see $EMU/emu.log)" >&2
		exit 1
	fi
	sleep 0.1
done
pgrep -P "$(cat "$EMU/emuhost.pid")" >"$EMU/deviced.pid"

# Enrol and assign once psd2-deviced has recorded the device.
if [ -x "$BIN/psd2ctl" ]; then
	i=0
	until "$BIN/psd2ctl" -c "$CTL_CONF" device list 2>/dev/null | grep -q "^$SERIAL "; do
		i=$((i + 1))
		if [ $i -gt 100 ]; then
			echo "sandbox-up: $SERIAL not recorded (see $EMU/emu.log)" >&2
			exit 1
		fi
		sleep 0.1
	done
	"$BIN/psd2ctl" -c "$CTL_CONF" device enrol "$SERIAL" >/dev/null
	holder=$("$BIN/psd2ctl" -c "$CTL_CONF" device list |
	    awk -v s="$SERIAL" '$1 == s { print $6 }')
	# One operator sets the sandbox up: the named exception to four eyes.
	if [ "$holder" != "$PSU" ]; then
		"$BIN/psd2ctl" -c "$CTL_CONF" device break-glass-assign \
		    "$SERIAL" "$PSU" --reason "sandbox setup" >/dev/null
	fi
fi
echo "sandbox: authenticator $SERIAL (assigned to $PSU) is plugged in;"
echo "  PSD2_EMU_SOCKET=$EMU/emu.sock $BIN/psd2-emu show|pin|press|decline $SERIAL (PIN 1234)"
