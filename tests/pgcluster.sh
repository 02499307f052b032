#!/bin/sh
# Throwaway PostgreSQL cluster for the sandbox and the tests, under var/.
# Usage: tests/pgcluster.sh start|stop|status|conninfo
# Environment: PSD2_PGDIR (default var/pg), PSD2_PGPORT (default 54329).
# initdb and pg_ctl refuse root, so both run as the postgres user on a data
# folder it owns; a cluster that is already running is reused.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
pgdir=${PSD2_PGDIR:-$top/var/pg}
port=${PSD2_PGPORT:-54329}
export PGPORT=$port
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)

# As root the cluster belongs to the postgres user, who must be able to
# reach the data folder: a checkout below a private home (mode 0700) is
# out of its reach, so the data then lives under /var/tmp instead (a
# folder per checkout) and var/pg points there.
if [ "$(id -u)" = 0 ] && [ -z "${PSD2_PGDIR:-}" ]; then
	mkdir -p "$top/var"
	if ! runuser -u postgres -- test -x "$top/var"; then
		alt=/var/tmp/psd2gate-pg-$(printf '%s' "$top" | cksum | cut -d' ' -f1)
		mkdir -p "$alt"
		[ -L "$pgdir" ] || { rm -rf "$pgdir"; ln -s "$alt" "$pgdir"; }
		pgdir=$alt
	fi
fi
sockdir=$pgdir/sock

as_pg() {
	if [ "$(id -u)" = 0 ]; then
		(cd / && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

conninfo() {
	echo "host=$sockdir port=$port dbname=psd2gate user=psd2gate"
}

running() {
	[ -f "$pgdir/data/postmaster.pid" ] && as_pg "$bindir/pg_ctl" -D "$pgdir/data" status >/dev/null 2>&1
}

start() {
	mkdir -p "$pgdir"
	[ "$(id -u)" = 0 ] && chown postgres "$pgdir"
	# A var/ below a root-only home must stay reachable for the postgres user.
	[ "$(id -u)" = 0 ] && chmod 0755 "$pgdir"
	if running; then
		return 0
	fi
	if [ ! -f "$pgdir/data/PG_VERSION" ]; then
		as_pg "$bindir/initdb" -D "$pgdir/data" --auth=trust -U postgres \
		    -E UTF8 --locale=C.UTF-8 >"$pgdir/initdb.log" 2>&1
	fi
	as_pg mkdir -p "$sockdir"
	as_pg "$bindir/pg_ctl" -D "$pgdir/data" -l "$pgdir/server.log" -w \
	    -o "-p $port -k $sockdir -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
	as_pg "$bindir/psql" -h "$sockdir" -p "$port" -U postgres -d postgres -qAtc \
	    "SELECT 1 FROM pg_roles WHERE rolname='psd2gate'" | grep -q 1 ||
	    as_pg "$bindir/psql" -h "$sockdir" -p "$port" -U postgres -d postgres -qc \
	    "CREATE ROLE psd2gate LOGIN"
	as_pg "$bindir/psql" -h "$sockdir" -p "$port" -U postgres -d postgres -qAtc \
	    "SELECT 1 FROM pg_database WHERE datname='psd2gate'" | grep -q 1 ||
	    as_pg "$bindir/psql" -h "$sockdir" -p "$port" -U postgres -d postgres -qc \
	    "CREATE DATABASE psd2gate OWNER psd2gate"
}

stop() {
	if running; then
		as_pg "$bindir/pg_ctl" -D "$pgdir/data" -m fast -w stop >/dev/null
	fi
}

case "${1:-}" in
start)		start; conninfo ;;
stop)		stop ;;
status)		running && echo running || { echo stopped; exit 1; } ;;
conninfo)	conninfo ;;
*)		echo "usage: $0 start|stop|status|conninfo" >&2; exit 2 ;;
esac
