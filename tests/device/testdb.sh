#!/bin/sh
# Recreates a device test database in the throwaway cluster and prints its
# conninfo: tests/device/testdb.sh NAME. Until psd2ctl migrate runs here,
# a stand-in psu table (PSUs anna and ben) precedes migration 020, and a
# stand-in audit_log precedes migration 082, the daemon's functions
# (src/db/functions/50_devices.sql) and the device functions of the staff
# pages and psd2ctl (src/db/functions/72_staff_devices.sql).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
db=$1
conninfo=$(tests/pgcluster.sh start)
sock=$(echo "$conninfo" | sed -n 's/.*host=\([^ ]*\).*/\1/p')
port=$(echo "$conninfo" | sed -n 's/.*port=\([^ ]*\).*/\1/p')
asroot() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
asroot psql -h "$sock" -p "$port" -U postgres -d postgres -qX \
    -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" \
    -c "CREATE DATABASE $db OWNER psd2gate" >&2
psql -h "$sock" -p "$port" -U psd2gate -d "$db" -qX -v ON_ERROR_STOP=1 \
    -c "CREATE TABLE psu (id bigserial PRIMARY KEY, username text UNIQUE NOT NULL)" \
    -c "INSERT INTO psu (username) VALUES ('anna'), ('ben')" \
    -c "CREATE TABLE audit_log (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), actor text NOT NULL, action text NOT NULL, detail jsonb NOT NULL DEFAULT '{}')" \
    -1 -f src/db/migrations/020_devices.sql \
    -f src/db/migrations/082_device_staff.sql \
    -f src/db/migrations/105_challenge_request_id.sql \
    -f src/db/functions/50_devices.sql \
    -f src/db/functions/72_staff_devices.sql >&2
echo "host=$sock port=$port dbname=$db user=psd2gate"
