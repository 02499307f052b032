#!/bin/sh
# Throwaway PostgreSQL clusters under var/: the tests' and the sandbox's.
#
#   tests/pgcluster.sh [--sandbox] start|stop|restart|status|conninfo
#   tests/pgcluster.sh run COMMAND...
#
# The test cluster (default): data in var/pg-test (PSD2_PGDIR overrides),
# port PSD2_PGPORT if set, else the port it already runs on, else the first
# free port from 55432 on; so the tests run beside `make run` and beside
# other checkouts. --sandbox: the sandbox's cluster for `make run`, data
# in var/pg, always port 54329 (conf/sandbox.conf names it).
#
# `run COMMAND` starts the test cluster, runs COMMAND with PSD2_PGPORT and
# PGPORT set to its port, and stops the cluster again however COMMAND ends
# (failure, Ctrl-C, TERM). Nested `run`s (make test -> a suite) share the
# outer one's cluster and leave the stopping to it.
#
# A port that something else holds is refused with its holder's name.
# initdb and pg_ctl refuse root, so as root both run as the postgres user
# on a data folder it owns; a cluster that is already running is reused.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
mode=test
if [ "${1:-}" = "--sandbox" ]; then
	mode=sandbox
	shift
fi
if [ "$mode" = sandbox ]; then
	pgdir=$top/var/pg
	want_port=54329
	pgdir_set=
else
	pgdir=${PSD2_PGDIR:-$top/var/pg-test}
	want_port=${PSD2_PGPORT:-}
	pgdir_set=${PSD2_PGDIR:-}
fi
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)

# As root the cluster belongs to the postgres user, who must be able to
# reach the data folder: a checkout below a private home (mode 0700) is
# out of its reach, so the data then lives under /var/tmp instead (a
# folder per checkout and cluster) and var/pg[-test] points there.
if [ "$(id -u)" = 0 ] && [ -z "$pgdir_set" ]; then
	mkdir -p "$top/var"
	if ! runuser -u postgres -- test -x "$top/var"; then
		alt=/var/tmp/psd2gate-$(basename "$pgdir")-$(printf '%s' "$top" | cksum | cut -d' ' -f1)
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

running() {
	[ -f "$pgdir/data/postmaster.pid" ] &&
	    as_pg "$bindir/pg_ctl" -D "$pgdir/data" status >/dev/null 2>&1
}

# The port of the running cluster (line 4 of postmaster.pid).
running_port() {
	sed -n 4p "$pgdir/data/postmaster.pid"
}

conninfo() {
	echo "host=$sockdir port=$port dbname=psd2gate user=psd2gate"
}

# Sets port: the running cluster's, else the wanted one (which must be
# free), else a free one.
choose_port() {
	if running; then
		port=$(running_port)
		if [ -n "$want_port" ] && [ "$want_port" != "$port" ]; then
			echo "pgcluster: the cluster in $pgdir runs on port $port," \
			    "not $want_port: stop it first ($0 stop)" >&2
			exit 1
		fi
		return 0
	fi
	if [ -z "$want_port" ]; then
		port=$(sh "$top/tests/port.sh" free 55432 55999)
		return 0
	fi
	port=$want_port
	if who=$(sh "$top/tests/port.sh" holder "$port"); then
		echo "pgcluster: port $port is taken by $who;" \
		    "cannot start the cluster in $pgdir there" >&2
		exit 1
	fi
}

start() {
	choose_port
	running && return 0
	mkdir -p "$pgdir"
	if [ "$(id -u)" = 0 ]; then
		chown postgres "$pgdir"
		# A var/ below a root-only home must stay reachable for postgres.
		chmod 0755 "$pgdir"
	fi
	if [ ! -f "$pgdir/data/PG_VERSION" ]; then
		as_pg "$bindir/initdb" -D "$pgdir/data" --auth=trust -U postgres \
		    -E UTF8 --locale=C.UTF-8 >"$pgdir/initdb.log" 2>&1
	fi
	as_pg mkdir -p "$sockdir"
	if ! as_pg "$bindir/pg_ctl" -D "$pgdir/data" -l "$pgdir/server.log" -w \
	    -o "-p $port -k $sockdir -c listen_addresses=127.0.0.1 -c max_connections=200" \
	    start >/dev/null; then
		echo "pgcluster: PostgreSQL did not start on port $port;" \
		    "$pgdir/server.log ends:" >&2
		tail -n 5 "$pgdir/server.log" >&2
		exit 1
	fi
	psql_pg() {
		as_pg "$bindir/psql" -h "$sockdir" -p "$port" -U postgres \
		    -d postgres "$@"
	}
	psql_pg -qAtc "SELECT 1 FROM pg_roles WHERE rolname='psd2gate'" |
	    grep -q 1 || psql_pg -qc "CREATE ROLE psd2gate LOGIN"
	# The roles of migration 083: the service's, psd2ctl's and the
	# device daemon's (psd2gate owns the tables and runs migrations).
	for role in psd2_service psd2_operator psd2_daemon; do
		psql_pg -qAtc "SELECT 1 FROM pg_roles WHERE rolname='$role'" |
		    grep -q 1 || psql_pg -qc "CREATE ROLE $role LOGIN"
	done
	psql_pg -qAtc "SELECT 1 FROM pg_database WHERE datname='psd2gate'" |
	    grep -q 1 || psql_pg -qc "CREATE DATABASE psd2gate OWNER psd2gate"
}

# pg_ctl restart -m fast: what an operator does to apply a setting; the
# clients see their connections end and the server back within seconds.
restart() {
	running || { echo "pgcluster: not running" >&2; exit 1; }
	as_pg "$bindir/pg_ctl" -D "$pgdir/data" -l "$pgdir/server.log" \
	    -m fast -w restart >/dev/null
}

stop() {
	if running; then
		as_pg "$bindir/pg_ctl" -D "$pgdir/data" -m fast -w stop >/dev/null
	fi
}

run() {
	if [ "${PSD2_PGCLUSTER_HELD:-}" = "$pgdir" ] && running; then
		"$@"
		return
	fi
	start
	export PSD2_PGCLUSTER_HELD="$pgdir" PSD2_PGPORT="$port" PGPORT="$port"
	trap stop EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	set +e
	"$@"
}

case "${1:-}" in
start)		start; conninfo ;;
stop)		stop ;;
restart)	restart ;;
status)		if running; then echo "running on port $(running_port)"
		else echo stopped; exit 1; fi ;;
conninfo)	if running; then port=$(running_port)
		elif [ -n "$want_port" ]; then port=$want_port
		else echo "pgcluster: $pgdir is not running" >&2; exit 1; fi
		conninfo ;;
run)		[ "$mode" = test ] || { echo "run is for the test cluster" >&2; exit 2; }
		shift; [ $# -gt 0 ] || { echo "usage: $0 run COMMAND..." >&2; exit 2; }
		run "$@" ;;
*)		echo "usage: $0 [--sandbox] start|stop|status|conninfo" \
		    "| run COMMAND..." >&2; exit 2 ;;
esac
