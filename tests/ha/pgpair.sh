#!/bin/sh
# Two throwaway PostgreSQL clusters for the failover and backup tests
# (tests/ha): a primary with a synchronous streaming standby, and a WAL
# archive.
#
#   tests/ha/pgpair.sh DIR PRIMARY_PORT STANDBY_PORT COMMAND
#
# COMMAND:
#   primary	a new primary in DIR/primary (WAL archived to DIR/archive),
#		with the psd2gate role and database
#   standby	pg_basebackup of the primary into DIR/standby, started as
#		its synchronous standby; waits until it is in sync
#   kill	the primary stopped hard (pg_ctl stop -m immediate)
#   promote	the standby promoted; waits until it accepts writes
#   basebackup NAME	a base backup of the primary into DIR/NAME (for a
#		restore from DIR/archive)
#   restore NAME PORT TARGET	DIR/NAME copied to DIR/NAME-restored and
#		recovered from the archive up to TARGET (a timestamptz), then
#		promoted and started on PORT
#   stop	every cluster of DIR stopped
#
# initdb and pg_ctl refuse root: as root they run as the postgres user,
# who owns DIR. A DIR below a folder postgres cannot enter (a checkout in
# a private home or under a 0700 parent) is moved where it can: the
# clusters live in a folder per DIR under /var/tmp and DIR points there,
# as tests/pgcluster.sh does; every path postgres is given (data,
# archive_command, logs) is that folder's.
set -eu
dir=$1 pport=$2 sport=$3 cmd=$4
shift 4
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)

if [ "$(id -u)" = 0 ]; then
	mkdir -p "$(dirname "$dir")"
	if ! runuser -u postgres -- test -x "$(dirname "$dir")"; then
		alt=/var/tmp/psd2gate-$(basename "$dir")-$(printf '%s' "$dir" |
		    cksum | cut -d' ' -f1)
		mkdir -p "$alt"
		[ -L "$dir" ] || { rm -rf "$dir"; ln -s "$alt" "$dir"; }
		dir=$alt
	fi
fi

as_pg() {
	if [ "$(id -u)" = 0 ]; then
		(cd / && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

psql_at() {
	as_pg "$bindir/psql" -h 127.0.0.1 -p "$1" -U postgres -d postgres \
	    -qAtc "$2"
}

pgctl_start() {
	if ! as_pg "$bindir/pg_ctl" -D "$1" -l "$1.log" -w -t 60 \
	    -o "-p $2 -k '' -c listen_addresses=127.0.0.1" start >/dev/null; then
		echo "pgpair: $1 did not start; its log ends:" >&2
		tail -n 5 "$1.log" >&2
		exit 1
	fi
}

stop_one() {
	if [ -f "$1/postmaster.pid" ]; then
		as_pg "$bindir/pg_ctl" -D "$1" -m fast -w stop >/dev/null 2>&1 ||
		    as_pg "$bindir/pg_ctl" -D "$1" -m immediate -w stop \
		    >/dev/null 2>&1 || true
	fi
}

case "$cmd" in
primary)
	for d in "$dir"/*/; do
		[ -d "$d" ] && stop_one "${d%/}"
	done
	rm -rf "$dir"
	mkdir -p "$dir/archive"
	[ "$(id -u)" = 0 ] && chown -R postgres "$dir"
	if ! as_pg "$bindir/initdb" -D "$dir/primary" --auth=trust \
	    -U postgres -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
		echo "pgpair: initdb failed; $dir/initdb.log ends:" >&2
		tail -n 5 "$dir/initdb.log" >&2
		exit 1
	fi
	# The archive keeps every WAL segment for point-in-time restores.
	# (synchronous_standby_names comes with the standby: set now, every
	# commit would wait for a standby that does not exist yet.)
	cat >>"$dir/primary/postgresql.conf" <<-CONF
	max_connections = 100
	archive_mode = on
	archive_command = 'test ! -f $dir/archive/%f && cp %p $dir/archive/%f'
	archive_timeout = 60
	wal_keep_size = '256MB'
	CONF
	pgctl_start "$dir/primary" "$pport"
	psql_at "$pport" "CREATE ROLE psd2gate LOGIN"
	# The roles of migration 083 (the service's, psd2ctl's, the daemon's).
	for role in psd2_service psd2_operator psd2_daemon; do
		psql_at "$pport" "CREATE ROLE $role LOGIN"
	done
	psql_at "$pport" "CREATE DATABASE psd2gate OWNER psd2gate"
	;;
standby)
	as_pg "$bindir/pg_basebackup" -h 127.0.0.1 -p "$pport" -U postgres \
	    -D "$dir/standby" -X stream -c fast -R
	# The copy inherits the primary's settings. Two must not stay: a
	# promoted standby waiting for a standby1 of its own would hang every
	# commit (synchronous_standby_names), and it must name itself to the
	# primary as standby1.
	cat >>"$dir/standby/postgresql.auto.conf" <<-CONF
	synchronous_standby_names = ''
	primary_conninfo = 'host=127.0.0.1 port=$pport user=postgres application_name=standby1'
	CONF
	pgctl_start "$dir/standby" "$sport"
	# From now on every commit on the primary waits for standby1's flush
	# (synchronous_commit on, the default).
	psql_at "$pport" "ALTER SYSTEM SET synchronous_standby_names = 'standby1'"
	psql_at "$pport" "SELECT pg_reload_conf()" >/dev/null
	i=0
	until [ "$(psql_at "$pport" "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'")" = sync ]; do
		i=$((i + 1))
		[ $i -le 300 ] || { echo "pgpair: standby not in sync" >&2; exit 1; }
		sleep 0.1
	done
	;;
kill)
	as_pg "$bindir/pg_ctl" -D "$dir/primary" -m immediate -w stop >/dev/null
	;;
promote)
	as_pg "$bindir/pg_ctl" -D "$dir/standby" -w -t 60 promote >/dev/null
	i=0
	until [ "$(psql_at "$sport" "SELECT pg_is_in_recovery()")" = f ]; do
		i=$((i + 1))
		[ $i -le 300 ] || { echo "pgpair: not promoted" >&2; exit 1; }
		sleep 0.1
	done
	;;
basebackup)
	rm -rf "${dir:?}/$1"
	as_pg "$bindir/pg_basebackup" -h 127.0.0.1 -p "$pport" -U postgres \
	    -D "$dir/$1" -X none -c fast
	;;
restore)
	name=$1 port=$2 target=$3
	new=$dir/$name-restored
	stop_one "$new"
	rm -rf "$new"
	as_pg cp -a "$dir/$name" "$new"
	# The restored cluster replays the archive up to target, then takes
	# over; it is nobody's primary for a standby.
	as_pg sh -c "cat >>'$new/postgresql.auto.conf'" <<-CONF
	synchronous_standby_names = ''
	archive_mode = off
	restore_command = 'cp $dir/archive/%f %p'
	recovery_target_time = '$target'
	recovery_target_action = 'promote'
	CONF
	as_pg touch "$new/recovery.signal"
	pgctl_start "$new" "$port"
	i=0
	until [ "$(psql_at "$port" "SELECT pg_is_in_recovery()")" = f ]; do
		i=$((i + 1))
		[ $i -le 600 ] || { echo "pgpair: restore did not finish" >&2; exit 1; }
		sleep 0.1
	done
	;;
stop)
	for d in "$dir"/*/; do
		[ -f "${d}postmaster.pid" ] && stop_one "${d%/}"
	done
	true
	;;
*)
	echo "usage: $0 DIR PRIMARY_PORT STANDBY_PORT primary|standby|kill|promote|basebackup NAME|restore NAME PORT TARGET|stop" >&2
	exit 2
	;;
esac
