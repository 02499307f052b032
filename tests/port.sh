#!/bin/sh
# TCP port helpers shared by the cluster script, the sandbox, the test
# suites and the benches.
#   tests/port.sh holder PORT     names what listens on 127.0.0.1:PORT
#                                  (exit 1, nothing printed, if it is free)
#   tests/port.sh free FROM TO    prints the first free port in FROM..TO
# A port counts as taken when anything listens on it (any address).
set -eu

listening() {
	ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# "postgres (pid 123, data folder /x/y)" or "psd2gate (pid 9, conf ...)":
# enough for the reader to find and stop it.
holder() {
	listening "$1" || return 1
	line=$(ss -Hltnp "sport = :$1" 2>/dev/null | head -n 1)
	pid=$(printf '%s\n' "$line" | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
	if [ -z "$pid" ]; then
		echo "a process this user cannot see (ss -ltnp 'sport = :$1' as root names it)"
		return 0
	fi
	cmd=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | sed 's/ *$//')
	name=$(cat "/proc/$pid/comm" 2>/dev/null || echo "?")
	case "$name" in
	postgres*)
		dir=$(readlink "/proc/$pid/cwd" 2>/dev/null || echo "?")
		echo "PostgreSQL (pid $pid, data folder $dir; stop it with: pg_ctl -D $dir stop)"
		;;
	*)
		echo "$name (pid $pid: $cmd)"
		;;
	esac
}

free() {
	p=$1
	while [ "$p" -le "$2" ]; do
		if ! listening "$p"; then
			echo "$p"
			return 0
		fi
		p=$((p + 1))
	done
	echo "no free TCP port in $1..$2" >&2
	return 1
}

case "${1:-}" in
holder)	holder "${2:?port}" ;;
free)	free "${2:?from}" "${3:?to}" ;;
*)	echo "usage: $0 holder PORT | free FROM TO" >&2; exit 2 ;;
esac
