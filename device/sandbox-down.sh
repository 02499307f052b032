#!/bin/sh
# Stops what device/sandbox-up.sh started: the emulator harness forwards
# SIGTERM to psd2-deviced (which releases its leases) and waits for it.
set -u
cd "$(dirname "$0")/.."
EMU=var/emu
[ -f "$EMU/emuhost.pid" ] || exit 0
pid=$(cat "$EMU/emuhost.pid")
if kill -TERM "$pid" 2>/dev/null; then
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "sandbox-down: harness $pid did not stop; killing" >&2
		[ -f "$EMU/deviced.pid" ] && kill -KILL "$(cat "$EMU/deviced.pid")" 2>/dev/null
		kill -KILL "$pid" 2>/dev/null
	fi
fi
rm -f "$EMU/emuhost.pid" "$EMU/deviced.pid" "$EMU/emu.sock"
