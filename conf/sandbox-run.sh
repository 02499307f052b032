#!/bin/sh
# make run: the sandbox on http://127.0.0.1:8080 with its own PostgreSQL
# cluster under var/, demo data, the sandbox TPP's certificate and an
# emulated authenticator. Ctrl-C stops everything it started; the data
# stays in var/ for the next run.
set -eu
cd "$(dirname "$0")/.."
BIN=${PSD2_BIN_DIR:-build/bin}
CONF=${PSD2_CONF:-conf/sandbox.conf}
ctl() { "$BIN/psd2ctl" -c "$CONF" "$@"; }

# The sandbox's fixed ports (README): say who holds one rather than fail
# later with a bare "could not start server" or "Address already in use".
for port in 8080 8081; do
	if who=$(sh tests/port.sh holder $port); then
		echo "sandbox: port $port is taken by $who; stop it first" >&2
		exit 1
	fi
done
pg_started=no
if ! tests/pgcluster.sh --sandbox status >/dev/null 2>&1; then
	pg_started=yes
fi
tests/pgcluster.sh --sandbox start >/dev/null
ctl keys-init
ctl migrate
ctl sandbox-seed
if [ -x tests/pki/mint.sh ]; then
	tests/pki/mint.sh sandbox var/sandbox
fi

devices=no
if [ -x device/sandbox-up.sh ]; then
	if device/sandbox-up.sh; then
		devices=yes
	else
		echo "sandbox: the emulated authenticator did not start" >&2
	fi
fi

cleanup() {
	trap - INT TERM EXIT
	[ -n "${gate_pid:-}" ] && kill "$gate_pid" 2>/dev/null && wait "$gate_pid" 2>/dev/null
	[ "$devices" = yes ] && device/sandbox-down.sh || true
	[ "$pg_started" = yes ] && tests/pgcluster.sh --sandbox stop || true
	echo "sandbox stopped; data kept in var/"
}
trap cleanup INT TERM EXIT

echo "sandbox: http://127.0.0.1:8080 (Ctrl-C stops it)"
echo "sandbox: staff pages on http://127.0.0.1:8081/staff"
"$BIN/psd2gate" -c "$CONF" -f -n -r &
gate_pid=$!
wait "$gate_pid" || true
